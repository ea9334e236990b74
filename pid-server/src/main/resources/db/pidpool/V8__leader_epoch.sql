-- The leader's database fence (docs/database.md, "Fencing the leader's writes"). One row holds the
-- highest leader epoch the database has seen. A new leader raises it when its term starts (only
-- upwards); every transaction in which a leader writes reads the row FOR UPDATE as its last statement
-- and commits only if it holds the leader's own epoch. So a deposed leader (a paused process that still
-- believes it leads) cannot commit anything once its successor has raised the epoch, and the raise
-- waits only for a leader transaction that checked before it and is committing.
CREATE TABLE pool_leader_epoch (
    id    INTEGER NOT NULL,
    epoch BIGINT  NOT NULL,
    CONSTRAINT pk_pool_leader_epoch PRIMARY KEY (id),
    CONSTRAINT ck_pool_leader_epoch_id CHECK (id = 1),
    CONSTRAINT ck_pool_leader_epoch_epoch CHECK (epoch >= 0)
) ${pidpool_table_options};

INSERT INTO pool_leader_epoch (id, epoch) VALUES (1, 0);
