-- PidPool schema, version 1. One file for H2 2.x (default mode), PostgreSQL 15 and MariaDB 10.11.
--
-- Portable on purpose: BIGINT / INTEGER / VARCHAR / BOOLEAN only, ids assigned by the application
-- (Snowflake ids, PID ids, deduction and refund ids) so no SERIAL / AUTO_INCREMENT / IDENTITY, named
-- constraints so errors can be mapped to fields, no vendor functions. Two Flyway placeholders absorb
-- the differences SQL cannot express portably (set by io.pidpool.server.jdbc.Dialect):
--   ${pidpool_timestamp}     TIMESTAMP(3); DATETIME(3) on MariaDB/MySQL, whose TIMESTAMP ends in 2038
--                            and follows the session time zone. Every stored time is UTC.
--   ${pidpool_table_options} empty; on MariaDB/MySQL "ENGINE=InnoDB ... COLLATE=utf8mb4_bin", because
--                            the server default collation is case-insensitive and ids are not.

-- Modules (department#module#system) and their configuration. -------------------------------------
CREATE TABLE pool_module (
    module_key       VARCHAR(200)         NOT NULL,
    servers          INTEGER              NOT NULL,
    monthly_demand   BIGINT               NOT NULL,
    min_per_instance INTEGER              NOT NULL,
    updated_at       ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_pool_module PRIMARY KEY (module_key),
    CONSTRAINT ck_pool_module_servers CHECK (servers BETWEEN 1 AND 10000),
    CONSTRAINT ck_pool_module_demand CHECK (monthly_demand >= 0),
    CONSTRAINT ck_pool_module_min CHECK (min_per_instance >= 0)
) ${pidpool_table_options};

CREATE TABLE pool_module_weight (
    module_key  VARCHAR(200) NOT NULL,
    instance_id VARCHAR(64)  NOT NULL,
    weight      INTEGER      NOT NULL,
    CONSTRAINT pk_pool_module_weight PRIMARY KEY (module_key, instance_id),
    CONSTRAINT fk_pool_module_weight_module FOREIGN KEY (module_key)
        REFERENCES pool_module (module_key) ON DELETE CASCADE,
    CONSTRAINT ck_pool_module_weight CHECK (weight BETWEEN 1 AND 1000)
) ${pidpool_table_options};

-- Accounts. The password is stored sealed (SealedSecret.encode(): keyId:base64 of AES-GCM output). -
CREATE TABLE pool_pid (
    pid_id            VARCHAR(128)         NOT NULL,
    module_key        VARCHAR(200)         NOT NULL,
    monthly_quota     BIGINT               NOT NULL,
    overage_allowance BIGINT               NOT NULL,
    status            VARCHAR(16)          NOT NULL,
    sealed_secret     VARCHAR(8000)        NOT NULL,
    created_at        ${pidpool_timestamp} NOT NULL,
    updated_at        ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_pool_pid PRIMARY KEY (pid_id),
    CONSTRAINT fk_pool_pid_module FOREIGN KEY (module_key) REFERENCES pool_module (module_key),
    CONSTRAINT ck_pool_pid_quota CHECK (monthly_quota BETWEEN 0 AND 1000000000),
    CONSTRAINT ck_pool_pid_allowance CHECK (overage_allowance BETWEEN 0 AND 1000000000),
    CONSTRAINT ck_pool_pid_status CHECK (status IN ('ACTIVE', 'COOLDOWN', 'DISABLED'))
) ${pidpool_table_options};
-- PIDs of a module (the leader's per-module view, findByModule)
CREATE INDEX ix_pool_pid_module ON pool_pid (module_key, pid_id);

CREATE TABLE pool_pid_attribute (
    pid_id     VARCHAR(128)  NOT NULL,
    attr_name  VARCHAR(64)   NOT NULL,
    attr_value VARCHAR(1024) NOT NULL,
    CONSTRAINT pk_pool_pid_attribute PRIMARY KEY (pid_id, attr_name),
    CONSTRAINT fk_pool_pid_attribute_pid FOREIGN KEY (pid_id) REFERENCES pool_pid (pid_id) ON DELETE CASCADE
) ${pidpool_table_options};

-- Where each PID node is written, stamped with the leader epoch that wrote it. -------------------
CREATE TABLE pool_assignment (
    pid_id           VARCHAR(128)         NOT NULL,
    module_key       VARCHAR(200)         NOT NULL,
    instance_id      VARCHAR(64)          NOT NULL,
    node_state       VARCHAR(16)          NOT NULL,
    leader_epoch     BIGINT               NOT NULL,
    owner_session_id BIGINT               NOT NULL,
    updated_at       ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_pool_assignment PRIMARY KEY (pid_id),
    CONSTRAINT fk_pool_assignment_pid FOREIGN KEY (pid_id) REFERENCES pool_pid (pid_id) ON DELETE CASCADE,
    CONSTRAINT fk_pool_assignment_module FOREIGN KEY (module_key) REFERENCES pool_module (module_key),
    CONSTRAINT ck_pool_assignment_state
        CHECK (node_state IN ('ADDING', 'ADDED', 'UPDATING', 'UPDATED', 'DELETING', 'DELETED')),
    CONSTRAINT ck_pool_assignment_epoch CHECK (leader_epoch >= 0)
) ${pidpool_table_options};
-- the PIDs of one instance, and of one module grouped by instance
CREATE INDEX ix_pool_assignment_instance ON pool_assignment (module_key, instance_id, pid_id);

-- Slots: which instance serves which pre-split share of a module (seed 000, problem 2). ----------
CREATE TABLE pool_slot (
    module_key   VARCHAR(200)         NOT NULL,
    slot_index   INTEGER              NOT NULL,
    instance_id  VARCHAR(64)          NOT NULL,
    leader_epoch BIGINT               NOT NULL,
    bound_at     ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_pool_slot PRIMARY KEY (module_key, slot_index),
    CONSTRAINT uq_pool_slot_instance UNIQUE (module_key, instance_id),
    CONSTRAINT fk_pool_slot_module FOREIGN KEY (module_key) REFERENCES pool_module (module_key) ON DELETE CASCADE,
    CONSTRAINT ck_pool_slot_index CHECK (slot_index BETWEEN 0 AND 9999),
    CONSTRAINT ck_pool_slot_epoch CHECK (leader_epoch >= 0)
) ${pidpool_table_options};

-- Operator batches (seed 000's operation record table). ------------------------------------------
CREATE TABLE op_batch (
    batch_id     BIGINT               NOT NULL,
    status       VARCHAR(16)          NOT NULL,
    requested_by VARCHAR(128)         NOT NULL,
    leader_epoch BIGINT               NOT NULL,
    created_at   ${pidpool_timestamp} NOT NULL,
    updated_at   ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_op_batch PRIMARY KEY (batch_id),
    CONSTRAINT ck_op_batch_status CHECK (status IN ('PENDING', 'DEALING', 'DEALED', 'FAILED')),
    CONSTRAINT ck_op_batch_epoch CHECK (leader_epoch >= 0)
) ${pidpool_table_options};
-- the leader's "unfinished batches, oldest first"
CREATE INDEX ix_op_batch_status ON op_batch (status, batch_id);

CREATE TABLE op_operation (
    batch_id       BIGINT        NOT NULL,
    op_index       INTEGER       NOT NULL,
    op_type        VARCHAR(16)   NOT NULL,
    module_key     VARCHAR(200),
    servers        INTEGER,
    monthly_demand BIGINT,
    result_ok      BOOLEAN,
    result_message VARCHAR(2000),
    CONSTRAINT pk_op_operation PRIMARY KEY (batch_id, op_index),
    CONSTRAINT fk_op_operation_batch FOREIGN KEY (batch_id) REFERENCES op_batch (batch_id) ON DELETE CASCADE,
    CONSTRAINT ck_op_operation_type
        CHECK (op_type IN ('ADD', 'UPDATE', 'DELETE', 'MIGRATE', 'RESET_QUOTA', 'SET_SERVERS')),
    CONSTRAINT ck_op_operation_index CHECK (op_index >= 0)
) ${pidpool_table_options};

CREATE TABLE op_pid (
    batch_id          BIGINT        NOT NULL,
    op_index          INTEGER       NOT NULL,
    pid_index         INTEGER       NOT NULL,
    pid_id            VARCHAR(128)  NOT NULL,
    sealed_secret     VARCHAR(8000),
    monthly_quota     BIGINT,
    overage_allowance BIGINT,
    CONSTRAINT pk_op_pid PRIMARY KEY (batch_id, op_index, pid_index),
    CONSTRAINT fk_op_pid_operation FOREIGN KEY (batch_id, op_index)
        REFERENCES op_operation (batch_id, op_index) ON DELETE CASCADE,
    CONSTRAINT ck_op_pid_quota CHECK (monthly_quota IS NULL OR monthly_quota BETWEEN 0 AND 1000000000),
    CONSTRAINT ck_op_pid_allowance
        CHECK (overage_allowance IS NULL OR overage_allowance BETWEEN 0 AND 1000000000)
) ${pidpool_table_options};
-- which batches touched a PID
CREATE INDEX ix_op_pid_pid ON op_pid (pid_id);

CREATE TABLE op_pid_attribute (
    batch_id   BIGINT        NOT NULL,
    op_index   INTEGER       NOT NULL,
    pid_index  INTEGER       NOT NULL,
    attr_name  VARCHAR(64)   NOT NULL,
    attr_value VARCHAR(1024) NOT NULL,
    CONSTRAINT pk_op_pid_attribute PRIMARY KEY (batch_id, op_index, pid_index, attr_name),
    CONSTRAINT fk_op_pid_attribute_pid FOREIGN KEY (batch_id, op_index, pid_index)
        REFERENCES op_pid (batch_id, op_index, pid_index) ON DELETE CASCADE
) ${pidpool_table_options};

-- Audit trail of operator actions. ------------------------------------------------------------------
CREATE TABLE audit_log (
    audit_id    BIGINT               NOT NULL,
    occurred_at ${pidpool_timestamp} NOT NULL,
    actor       VARCHAR(128)         NOT NULL,
    action_name VARCHAR(64)          NOT NULL,
    target      VARCHAR(256)         NOT NULL,
    detail      VARCHAR(4000)        NOT NULL,
    CONSTRAINT pk_audit_log PRIMARY KEY (audit_id)
) ${pidpool_table_options};
CREATE INDEX ix_audit_log_time ON audit_log (occurred_at, audit_id);
CREATE INDEX ix_audit_log_target ON audit_log (target, occurred_at, audit_id);

-- Usage ledger (seeds 002 and 004). ------------------------------------------------------------------
-- One row per client (SDK incarnation): how far its numbered events have arrived without a gap.
-- Locking this row serialises the events of one client, which makes replays idempotent.
CREATE TABLE usage_client (
    client_id          VARCHAR(64) NOT NULL,
    contiguous_through BIGINT      NOT NULL,
    highest_seen       BIGINT      NOT NULL,
    CONSTRAINT pk_usage_client PRIMARY KEY (client_id),
    CONSTRAINT ck_usage_client_progress CHECK (contiguous_through >= 0 AND highest_seen >= contiguous_through)
) ${pidpool_table_options};

-- Every sequence number received, deductions and refunds alike: dedup and gap detection.
CREATE TABLE usage_sequence (
    client_id  VARCHAR(64) NOT NULL,
    client_seq BIGINT      NOT NULL,
    event_id   VARCHAR(64) NOT NULL,
    CONSTRAINT pk_usage_sequence PRIMARY KEY (client_id, client_seq),
    CONSTRAINT fk_usage_sequence_client FOREIGN KEY (client_id) REFERENCES usage_client (client_id),
    CONSTRAINT ck_usage_sequence_seq CHECK (client_seq >= 1)
) ${pidpool_table_options};

-- No foreign key to pool_pid: usage of a PID deleted since must still be billed.
-- refunded_total is raised only by a conditional UPDATE under the row lock; the CHECK is the backstop
-- that no code path can make the refunds of a deduction exceed it.
CREATE TABLE usage_deduction (
    deduction_id   VARCHAR(64)          NOT NULL,
    pid_id         VARCHAR(128)         NOT NULL,
    client_id      VARCHAR(64)          NOT NULL,
    client_seq     BIGINT               NOT NULL,
    amount         BIGINT               NOT NULL,
    refunded_total BIGINT               NOT NULL,
    usage_month    INTEGER              NOT NULL,
    occurred_at    ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_usage_deduction PRIMARY KEY (deduction_id),
    CONSTRAINT fk_usage_deduction_sequence FOREIGN KEY (client_id, client_seq)
        REFERENCES usage_sequence (client_id, client_seq),
    CONSTRAINT ck_usage_deduction_amount CHECK (amount > 0),
    CONSTRAINT ck_usage_deduction_refunded CHECK (refunded_total >= 0 AND refunded_total <= amount),
    CONSTRAINT ck_usage_deduction_month
        CHECK (usage_month BETWEEN 200001 AND 999912 AND MOD(usage_month, 100) BETWEEN 1 AND 12)
) ${pidpool_table_options};
-- usage of one PID in a month; usage of every PID in a month
CREATE INDEX ix_usage_deduction_pid ON usage_deduction (pid_id, usage_month);
CREATE INDEX ix_usage_deduction_month ON usage_deduction (usage_month, pid_id);

CREATE TABLE usage_refund (
    refund_id      VARCHAR(64)          NOT NULL,
    deduction_id   VARCHAR(64)          NOT NULL,
    client_id      VARCHAR(64)          NOT NULL,
    client_seq     BIGINT               NOT NULL,
    amount         BIGINT               NOT NULL,
    refunded_after BIGINT               NOT NULL,
    occurred_at    ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_usage_refund PRIMARY KEY (refund_id),
    CONSTRAINT fk_usage_refund_deduction FOREIGN KEY (deduction_id) REFERENCES usage_deduction (deduction_id),
    CONSTRAINT fk_usage_refund_sequence FOREIGN KEY (client_id, client_seq)
        REFERENCES usage_sequence (client_id, client_seq),
    CONSTRAINT ck_usage_refund_amount CHECK (amount > 0),
    CONSTRAINT ck_usage_refund_after CHECK (refunded_after >= amount)
) ${pidpool_table_options};
-- refunds of a deduction in the order they were applied
CREATE INDEX ix_usage_refund_deduction ON usage_refund (deduction_id, refunded_after);
