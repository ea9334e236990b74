-- Account version (docs/architecture.md, "warm follower accounts"). One row counts every committed
-- transaction that changed an account or a module: each such transaction increments it first (so the
-- row lock orders the writers, and versions are committed in increasing order) and logs the ids of
-- the PIDs it inserted, updated or deleted under its version. A follower keeps the accounts it loaded
-- with the version they were read at; a new leader reads the version again and either finds it equal
-- (nothing changed), or re-reads exactly the PIDs logged after it (deletes included), or, if the log
-- was pruned past it, loads everything as before. pruned_below: log rows below it may be gone.
CREATE TABLE pool_account_version (
    id           INTEGER NOT NULL,
    version      BIGINT  NOT NULL,
    pruned_below BIGINT  NOT NULL,
    CONSTRAINT pk_pool_account_version PRIMARY KEY (id),
    CONSTRAINT ck_pool_account_version_id CHECK (id = 1)
) ${pidpool_table_options};

INSERT INTO pool_account_version (id, version, pruned_below) VALUES (1, 0, 0);

-- No foreign key to pool_pid: a deleted PID's entry is what tells a follower to drop it.
CREATE TABLE pool_account_change (
    change_version BIGINT       NOT NULL,
    pid_id         VARCHAR(128) NOT NULL,
    CONSTRAINT pk_pool_account_change PRIMARY KEY (change_version, pid_id)
) ${pidpool_table_options};
