-- One cluster per database (docs/database.md, "One cluster per database"). The first server to start
-- on the database records its cluster name here; a server of another cluster refuses to start. Two
-- clusters sharing the tables would each place the same PIDs (both leaders read the same accounts),
-- so both clusters' instances would log in to one account, while their leaders fenced each other's
-- rows in a loop. Empty after the migration: the server inserts the row right after it.
CREATE TABLE pool_cluster (
    id           INTEGER              NOT NULL,
    cluster_name VARCHAR(64)          NOT NULL,
    bound_at     ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_pool_cluster PRIMARY KEY (id),
    CONSTRAINT ck_pool_cluster_id CHECK (id = 1)
) ${pidpool_table_options};
