package io.pidpool.server.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Test;

/** {@link SqlErrors} on the errors each database actually raises (messages copied from real runs). */
class SqlErrorsTest {
    private final SqlErrors postgres = new SqlErrors(Dialect.POSTGRESQL);
    private final SqlErrors mariadb = new SqlErrors(Dialect.MARIADB);
    private final SqlErrors h2 = new SqlErrors(Dialect.H2);

    private static void expect(PidPoolException e, ErrorCode code, String field) {
        assertThat(e.code()).as(e.getMessage()).isEqualTo(code);
        assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
    }

    @Test
    void duplicateKeysAreConflictsOnTheFieldOfTheConstraint() {
        var pg = new SQLException("ERROR: duplicate key value violates unique constraint \"pk_usage_refund\"", "23505");
        var maria = new SQLIntegrityConstraintViolationException(
                "(conn=7) Duplicate entry 'r1' for key 'PRIMARY'", "23000", 1062);
        var mariaNamed = new SQLIntegrityConstraintViolationException(
                "(conn=7) Duplicate entry 'fin#a#b-h1' for key 'uq_pool_slot_instance'", "23000", 1062);

        expect(postgres.translate(pg, "ignored"), ErrorCode.CONFLICT, "refundId");
        expect(mariadb.translate(maria, "refundId"), ErrorCode.CONFLICT, "refundId");
        expect(mariadb.translate(mariaNamed, "slot"), ErrorCode.CONFLICT, "instance");
    }

    @Test
    void missingParentsAreNotFoundAndReferencedParentsAreConflicts() {
        var h2Missing = new SQLException(
                "Referential integrity constraint violation: \"FK_POOL_PID_MODULE: PUBLIC.POOL_PID FOREIGN KEY(MODULE_KEY)"
                        + " REFERENCES PUBLIC.POOL_MODULE(MODULE_KEY) ('no#such#module')\"",
                "23506");
        var h2Child =
                new SQLException("Referential integrity constraint violation: \"FK_POOL_PID_MODULE ...\"", "23503");
        var pgMissing = new SQLException(
                "ERROR: insert or update on table \"pool_pid\" violates foreign key constraint \"fk_pool_pid_module\"",
                "23503");
        var pgChild = new SQLException(
                "ERROR: update or delete on table \"pool_module\" violates foreign key constraint"
                        + " \"fk_pool_pid_module\" on table \"pool_pid\"",
                "23503");
        var mariaMissing = new SQLIntegrityConstraintViolationException(
                "Cannot add or update a child row: a foreign key constraint fails (`db`.`usage_refund`, CONSTRAINT"
                        + " `fk_usage_refund_deduction` FOREIGN KEY (`deduction_id`) REFERENCES ...)",
                "23000",
                1452);

        expect(h2.translate(h2Missing, null), ErrorCode.NOT_FOUND, "pid.module");
        expect(h2.translate(h2Child, null), ErrorCode.CONFLICT, "pid.module");
        expect(postgres.translate(pgMissing, null), ErrorCode.NOT_FOUND, "pid.module");
        expect(postgres.translate(pgChild, null), ErrorCode.CONFLICT, "pid.module");
        expect(mariadb.translate(mariaMissing, null), ErrorCode.NOT_FOUND, "deductionId");
    }

    @Test
    void checkViolationsAndBadValuesAreInvalidArguments() {
        var maria = new SQLException(
                "CONSTRAINT `ck_usage_deduction_refunded` failed for `db`.`usage_deduction`", "23000", 4025);
        var pg = new SQLException(
                "ERROR: new row for relation \"pool_pid\" violates check constraint \"ck_pool_pid_quota\"", "23514");
        var h2Check = new SQLException("Check constraint violation: \"CK_POOL_PID_ATTRIBUTE_X\"", "23513");
        var tooLong = new SQLException("value too long for type character varying(128)", "22001");

        expect(mariadb.translate(maria, null), ErrorCode.INVALID_ARGUMENT, "amount");
        expect(postgres.translate(pg, null), ErrorCode.INVALID_ARGUMENT, "pid.monthlyQuota");
        expect(h2.translate(h2Check, null), ErrorCode.INVALID_ARGUMENT, null);
        expect(postgres.translate(tooLong, null), ErrorCode.INVALID_ARGUMENT, null);
    }

    @Test
    void theLongestConstraintNameWins() {
        assertThat(SqlErrors.constraintIn("duplicate key value violates unique constraint \"pk_pool_pid_attribute\""))
                .isEqualTo("pk_pool_pid_attribute");
        assertThat(SqlErrors.constraintIn("violates unique constraint \"pk_pool_pid\""))
                .isEqualTo("pk_pool_pid");
        assertThat(SqlErrors.constraintIn("constraint xpk_pool_pid")).isNull();
    }

    @Test
    void connectionProblemsDeadlocksAndUnknownErrorsAreUnavailable() {
        var refused = new SQLException("Connection to 127.0.0.1:1 refused", "08001");
        var poolTimeout = new SQLTransientConnectionException("pidpool-db - Connection is not available");
        var deadlock = new SQLException("ERROR: deadlock detected", "40P01");
        var mariaDeadlock = new SQLException("Deadlock found when trying to get lock", "40001", 1213);
        var syntax = new SQLException("ERROR: syntax error at or near \"SELEC\"", "42601");

        for (var e : new SQLException[] {refused, poolTimeout, deadlock, syntax}) {
            PidPoolException translated = postgres.translate(e, null);
            expect(translated, ErrorCode.UNAVAILABLE, null);
            assertThat(translated.getCause()).isSameAs(e);
        }
        assertThat(postgres.kindOf(deadlock)).isEqualTo(SqlErrors.Kind.DEADLOCK);
        assertThat(mariadb.kindOf(mariaDeadlock)).isEqualTo(SqlErrors.Kind.DEADLOCK);
        assertThat(mariadb.kindOf(refused)).isEqualTo(SqlErrors.Kind.CONNECTION);
    }

    @Test
    void chainedAndWrappedExceptionsAreFound() {
        var batch = new BatchUpdateException("Batch entry 0 INSERT INTO pool_pid ... was aborted", "23505", new int[0]);
        batch.setNextException(
                new SQLException("ERROR: duplicate key value violates unique constraint \"pk_pool_pid\"", "23505"));
        var wrapped = new RuntimeException("outer", new IllegalStateException("middle", batch));

        expect(postgres.translate(wrapped, null), ErrorCode.CONFLICT, "pid.id");
    }

    @Test
    void messagesNameTheConstraintButNeverCopyRowValues() {
        var pg = new SQLException(
                "ERROR: duplicate key value violates unique constraint \"pk_pool_pid\"\n Detail: Key (pid_id)=(u-secret-ish)",
                "23505");

        PidPoolException e = postgres.translate(pg, null);

        assertThat(e.getMessage()).contains("pk_pool_pid").contains("23505").doesNotContain("u-secret-ish");
    }

    @Test
    void ownAndForeignExceptionsPassThroughUnchanged() {
        var own = PidPoolException.conflict("pid.id", "PID u1 exists");
        var foreign = new IllegalArgumentException("the caller's own failure");

        assertThat(postgres.translateOrPass(own, null)).isSameAs(own);
        assertThat(postgres.translateOrPass(foreign, null)).isSameAs(foreign);
    }
}
