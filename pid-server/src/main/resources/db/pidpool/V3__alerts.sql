-- PidPool schema, version 3: alerts (issue 4, docs/alerts.md). Same portability rules as V1
-- (docs/database.md): portable types, application-assigned ids, named constraints, two placeholders.
--
-- One row per alert episode. open_key holds the alert key while the episode is OPEN and is NULL once
-- it is RESOLVED: its unique constraint keeps one OPEN alert per key (H2, PostgreSQL and MariaDB all
-- allow any number of NULLs in a unique column), which is the store's de-duplication, without a
-- partial index (PostgreSQL only) or a generated column (syntax differs).
CREATE TABLE alert (
    alert_id    BIGINT               NOT NULL,
    alert_key   VARCHAR(300)         NOT NULL,
    open_key    VARCHAR(300),
    alert_kind  VARCHAR(32)          NOT NULL,
    severity    VARCHAR(16)          NOT NULL,
    subject     VARCHAR(256)         NOT NULL,
    message     VARCHAR(4000)        NOT NULL,
    alert_state VARCHAR(16)          NOT NULL,
    occurrences BIGINT               NOT NULL,
    first_seen  ${pidpool_timestamp} NOT NULL,
    last_seen   ${pidpool_timestamp} NOT NULL,
    resolved_at ${pidpool_timestamp},
    CONSTRAINT pk_alert PRIMARY KEY (alert_id),
    CONSTRAINT uq_alert_open UNIQUE (open_key),
    CONSTRAINT ck_alert_state CHECK (alert_state IN ('OPEN', 'RESOLVED')),
    CONSTRAINT ck_alert_open CHECK ((alert_state = 'OPEN' AND open_key IS NOT NULL AND resolved_at IS NULL)
        OR (alert_state = 'RESOLVED' AND open_key IS NULL AND resolved_at IS NOT NULL)),
    CONSTRAINT ck_alert_occurrences CHECK (occurrences >= 1)
) ${pidpool_table_options};
CREATE INDEX ix_alert_state ON alert (alert_state, first_seen, alert_id);
CREATE INDEX ix_alert_time ON alert (first_seen, alert_id);
