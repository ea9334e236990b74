-- A refund id is unique per deduction (docs/quota.md §5a), as in Redis: the key of usage_refund
-- becomes (deduction_id, refund_id). No ALTER that replaces a primary key is portable across H2,
-- PostgreSQL and MariaDB, so the rows are copied aside, the table is created again under its old
-- constraint and index names, and the rows are copied back. Nothing references usage_refund.
CREATE TABLE usage_refund_copy (
    refund_id      VARCHAR(64)          NOT NULL,
    deduction_id   VARCHAR(64)          NOT NULL,
    client_id      VARCHAR(64)          NOT NULL,
    client_seq     BIGINT               NOT NULL,
    amount         BIGINT               NOT NULL,
    refunded_after BIGINT               NOT NULL,
    occurred_at    ${pidpool_timestamp} NOT NULL
) ${pidpool_table_options};

INSERT INTO usage_refund_copy (refund_id, deduction_id, client_id, client_seq, amount, refunded_after, occurred_at)
    SELECT refund_id, deduction_id, client_id, client_seq, amount, refunded_after, occurred_at FROM usage_refund;

DROP TABLE usage_refund;

CREATE TABLE usage_refund (
    refund_id      VARCHAR(64)          NOT NULL,
    deduction_id   VARCHAR(64)          NOT NULL,
    client_id      VARCHAR(64)          NOT NULL,
    client_seq     BIGINT               NOT NULL,
    amount         BIGINT               NOT NULL,
    refunded_after BIGINT               NOT NULL,
    occurred_at    ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_usage_refund PRIMARY KEY (deduction_id, refund_id),
    CONSTRAINT fk_usage_refund_deduction FOREIGN KEY (deduction_id) REFERENCES usage_deduction (deduction_id),
    CONSTRAINT fk_usage_refund_sequence FOREIGN KEY (client_id, client_seq)
        REFERENCES usage_sequence (client_id, client_seq),
    CONSTRAINT ck_usage_refund_amount CHECK (amount > 0),
    CONSTRAINT ck_usage_refund_after CHECK (refunded_after >= amount)
) ${pidpool_table_options};
-- refunds of a deduction in the order they were applied
CREATE INDEX ix_usage_refund_deduction ON usage_refund (deduction_id, refunded_after);

INSERT INTO usage_refund (refund_id, deduction_id, client_id, client_seq, amount, refunded_after, occurred_at)
    SELECT refund_id, deduction_id, client_id, client_seq, amount, refunded_after, occurred_at FROM usage_refund_copy;

DROP TABLE usage_refund_copy;
