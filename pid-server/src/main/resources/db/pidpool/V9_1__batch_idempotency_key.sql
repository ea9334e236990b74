-- Idempotency keys of operator batches (docs/http-api.md, "Idempotency keys"). One row per principal
-- (the token's name, as op_batch.requested_by) and key, written in the transaction that records the
-- batch: the primary key makes a concurrent double submit record one batch. fingerprint is the
-- SHA-256 (hex) of the request without its secrets, so a retry with another request is told apart.
-- Kept as long as its batch.
CREATE TABLE op_batch_key (
    requested_by VARCHAR(128) NOT NULL,
    idem_key     VARCHAR(128) NOT NULL,
    fingerprint  VARCHAR(64)  NOT NULL,
    batch_id     BIGINT       NOT NULL,
    CONSTRAINT pk_op_batch_key PRIMARY KEY (requested_by, idem_key),
    CONSTRAINT uq_op_batch_key_batch UNIQUE (batch_id),
    CONSTRAINT fk_op_batch_key_batch FOREIGN KEY (batch_id) REFERENCES op_batch (batch_id) ON DELETE CASCADE
) ${pidpool_table_options};
