-- pid-worker task table (docs/worker.md). Times are epoch milliseconds; slot is in [0, 2^32).
CREATE TABLE pidpool_task (
    id                 BIGINT AUTO_INCREMENT PRIMARY KEY,
    task_group         VARCHAR(64)   NOT NULL,
    slot               BIGINT        NOT NULL,
    task_type          VARCHAR(128)  NOT NULL,
    task_key           VARCHAR(255)  NOT NULL,
    body               MEDIUMTEXT    NOT NULL,
    status             VARCHAR(16)   NOT NULL,
    attempts           INT           NOT NULL DEFAULT 0,
    max_attempts       INT           NOT NULL,
    next_attempt_at_ms BIGINT        NOT NULL,
    lease_until_ms     BIGINT        NOT NULL DEFAULT 0,
    owner_id           VARCHAR(64),
    claim_id           BIGINT        NOT NULL DEFAULT 0,
    last_error         VARCHAR(2000),
    created_at_ms      BIGINT        NOT NULL,
    updated_at_ms      BIGINT        NOT NULL,
    CONSTRAINT pidpool_task_status_ck CHECK (status IN ('PENDING', 'RUNNING', 'DONE', 'FAILED')),
    CONSTRAINT pidpool_task_slot_ck CHECK (slot >= 0 AND slot < 4294967296)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
-- the fetch: task_group = ? AND status = 'PENDING' AND (slot ranges) ORDER BY id LIMIT ?
-- walks PENDING rows in id order and stops after LIMIT matches, so its cost does not grow with
-- the backlog (an index on slot would read every PENDING row of the ranges to sort them by id)
CREATE INDEX pidpool_task_fetch_idx ON pidpool_task (task_group, status, id);
