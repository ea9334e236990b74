-- PIDs in cooldown (account health, DESIGN §5): a holder reported a login failure or a login conflict,
-- or the PID could not be taken up several times in a row. The leader hands such a PID to nobody before
-- until_at; the row keeps that end time across leader changes (pool_pid.status = 'COOLDOWN' is what the
-- read API shows). Written by the leader only; deleting the PID deletes its cooldown.
CREATE TABLE pool_pid_cooldown (
    pid_id     VARCHAR(128)         NOT NULL,
    until_at   ${pidpool_timestamp} NOT NULL,
    cause      VARCHAR(2000)        NOT NULL,
    started_at ${pidpool_timestamp} NOT NULL,
    CONSTRAINT pk_pool_pid_cooldown PRIMARY KEY (pid_id),
    CONSTRAINT fk_pool_pid_cooldown_pid FOREIGN KEY (pid_id) REFERENCES pool_pid (pid_id) ON DELETE CASCADE
) ${pidpool_table_options};
