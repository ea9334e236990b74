-- Per-module rebalance delay and alert acknowledgements (docs/http-api.md, docs/database.md).
-- Columns only, added with the one ALTER TABLE form H2, PostgreSQL and MariaDB share; all nullable,
-- so existing rows keep their meaning.
--
-- pool_module.rebalance_delay_ms: how long the leader keeps a departed instance's share for a
-- replacement in this module; NULL = the server's default (advice.rebalanceDelayMs).
ALTER TABLE pool_module ADD COLUMN rebalance_delay_ms BIGINT;
ALTER TABLE pool_module ADD CONSTRAINT ck_pool_module_rebalance
    CHECK (rebalance_delay_ms IS NULL OR rebalance_delay_ms BETWEEN 0 AND 86400000);
-- The same setting as a SET_SERVERS operation of a batch carries it (NULL: the default).
ALTER TABLE op_operation ADD COLUMN rebalance_delay_ms BIGINT;
-- Who acknowledged an alert episode, and when (both or neither).
ALTER TABLE alert ADD COLUMN acked_by VARCHAR(128);
ALTER TABLE alert ADD COLUMN acked_at ${pidpool_timestamp};
ALTER TABLE alert ADD CONSTRAINT ck_alert_acked CHECK ((acked_by IS NULL AND acked_at IS NULL)
    OR (acked_by IS NOT NULL AND acked_at IS NOT NULL));
