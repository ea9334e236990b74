-- Durable RESET_QUOTA (issue 4, docs/quota.md §6a). One row per PID that was ever reset: the latest
-- reset's generation (1, 2, 3, ... per PID) and commit time, written in the same transaction as the
-- batch. The leader's quota reconciliation compares it with the generation Redis recorded next to the
-- counters and re-applies a reset Redis never saw (Redis was down and the committing leader died).
-- No foreign key to pool_pid: generations must keep increasing across a DELETE and a new ADD of the
-- same id, or an old Redis marker would hide the new PID's first reset.
CREATE TABLE quota_reset (
    pid_id     VARCHAR(128)         NOT NULL,
    generation BIGINT               NOT NULL,
    reset_at   ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_quota_reset PRIMARY KEY (pid_id),
    CONSTRAINT ck_quota_reset_generation CHECK (generation >= 1)
) ${pidpool_table_options};
