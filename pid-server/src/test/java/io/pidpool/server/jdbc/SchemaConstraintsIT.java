package io.pidpool.server.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.Deduction;
import io.pidpool.core.port.Refund;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.testing.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.YearMonth;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The schema's own rules, on every database: rows written behind the adapters' backs (raw SQL, as a
 * buggy or future code path might) are refused by the constraints, come out as the right
 * {@link PidPoolException}, and leave the tables as they were. The ports' own checks usually stop
 * such rows earlier (see the contracts); this proves the last line holds too.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(SharedTestDatabases.class)
class SchemaConstraintsIT {
    private static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");
    private static final String PID_INSERT = "INSERT INTO pool_pid (pid_id, module_key, monthly_quota,"
            + " overage_allowance, status, sealed_secret, created_at, updated_at)"
            + " VALUES ('%s', '%s', %d, 0, '%s', 'k1:AAAA', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)";

    private final ManualClock clock = ManualClock.at("2025-07-09T08:00:00Z");
    private List<TestDatabase> databases;

    @BeforeAll
    void open() {
        databases = SharedTestDatabases.available();
    }

    List<TestDatabase> databases() {
        return databases;
    }

    /** Fresh tables with module FIN, PID u1 and deduction d1 (amount 5, 2 refunded). */
    private Repositories seeded(TestDatabase db) {
        Repositories repos = db.fresh(clock);
        repos.modules().put(ModuleConfig.of(FIN, 2));
        repos.pids()
                .insert(new PidRecord(
                        "u1",
                        FIN,
                        100,
                        0,
                        PidAvailability.ACTIVE,
                        new SealedSecret("k1", "x".getBytes(StandardCharsets.UTF_8)),
                        Map.of()));
        repos.usage().recordDeduction(new Deduction("d1", "u1", "c1", 1, 5, YearMonth.of(2025, 7), clock.instant()));
        repos.usage().recordRefund(new Refund("r1", "d1", "c1", 2, 2, clock.instant()));
        return repos;
    }

    private static PidPoolException raw(TestDatabase db, String duplicateField, String sql) {
        Throwable thrown =
                catchThrowable(() -> db.database().session().write(duplicateField, (Handle h) -> h.execute(sql)));
        assertThat(thrown).as(sql).isInstanceOf(PidPoolException.class);
        return (PidPoolException) thrown;
    }

    private static void expect(PidPoolException e, ErrorCode code, String field) {
        assertThat(e.code()).as(e.getMessage()).isEqualTo(code);
        assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
    }

    private static long count(TestDatabase db, String sql) {
        return db.database()
                .session()
                .read(h -> h.createQuery(sql).mapTo(Long.class).one());
    }

    @ParameterizedTest(autoCloseArguments = false)
    @MethodSource("databases")
    void negativeQuotaIsRefusedByTheCheck(TestDatabase db) {
        seeded(db);

        expect(
                raw(db, null, String.format(PID_INSERT, "u2", FIN, -1, "ACTIVE")),
                ErrorCode.INVALID_ARGUMENT,
                "pid.monthlyQuota");
        expect(
                raw(db, null, "UPDATE pool_pid SET overage_allowance = -5 WHERE pid_id = 'u1'"),
                ErrorCode.INVALID_ARGUMENT,
                "pid.overageAllowance");
        expect(
                raw(db, null, String.format(PID_INSERT, "u3", FIN, 1, "LOST")),
                ErrorCode.INVALID_ARGUMENT,
                "pid.status");

        assertThat(count(db, "SELECT COUNT(*) FROM pool_pid")).isEqualTo(1);
        assertThat(count(db, "SELECT overage_allowance FROM pool_pid WHERE pid_id = 'u1'"))
                .isZero();
    }

    @ParameterizedTest(autoCloseArguments = false)
    @MethodSource("databases")
    void duplicatePidAndUnknownModuleAreRefusedByTheKeys(TestDatabase db) {
        seeded(db);

        expect(raw(db, "pid.id", String.format(PID_INSERT, "u1", FIN, 1, "ACTIVE")), ErrorCode.CONFLICT, "pid.id");
        expect(
                raw(db, null, String.format(PID_INSERT, "u9", "no#such#module", 1, "ACTIVE")),
                ErrorCode.NOT_FOUND,
                "pid.module");
        expect(
                raw(db, null, "DELETE FROM pool_module WHERE module_key = '" + FIN + "'"),
                ErrorCode.CONFLICT,
                "pid.module");

        assertThat(count(db, "SELECT COUNT(*) FROM pool_pid")).isEqualTo(1);
        assertThat(count(db, "SELECT COUNT(*) FROM pool_module")).isEqualTo(1);
    }

    @ParameterizedTest(autoCloseArguments = false)
    @MethodSource("databases")
    void refundsAboveTheDeductionAreRefusedByTheCheck(TestDatabase db) {
        seeded(db);

        expect(
                raw(
                        db,
                        null,
                        "UPDATE usage_deduction SET refunded_total = refunded_total + 4 WHERE deduction_id = 'd1'"),
                ErrorCode.INVALID_ARGUMENT,
                "amount");
        expect(
                raw(db, null, "UPDATE usage_deduction SET refunded_total = -1 WHERE deduction_id = 'd1'"),
                ErrorCode.INVALID_ARGUMENT,
                "amount");
        expect(
                raw(db, null, "UPDATE usage_deduction SET amount = 0, refunded_total = 0 WHERE deduction_id = 'd1'"),
                ErrorCode.INVALID_ARGUMENT,
                "amount");

        assertThat(count(db, "SELECT refunded_total FROM usage_deduction WHERE deduction_id = 'd1'"))
                .isEqualTo(2);
    }

    @ParameterizedTest(autoCloseArguments = false)
    @MethodSource("databases")
    void duplicateDeductionAndRefundIdsAreRefusedByTheKeys(TestDatabase db) {
        seeded(db);
        db.execute(List.of("INSERT INTO usage_sequence (client_id, client_seq, event_id) VALUES ('c1', 3, 'x')"));

        expect(
                raw(
                        db,
                        "deductionId",
                        "INSERT INTO usage_deduction (deduction_id, pid_id, client_id, client_seq, amount,"
                                + " refunded_total, usage_month, occurred_at)"
                                + " VALUES ('d1', 'u1', 'c1', 3, 1, 0, 202507, CURRENT_TIMESTAMP)"),
                ErrorCode.CONFLICT,
                "deductionId");
        expect(
                raw(
                        db,
                        "refundId",
                        "INSERT INTO usage_refund (refund_id, deduction_id, client_id, client_seq, amount,"
                                + " refunded_after, occurred_at) VALUES ('r1', 'd1', 'c1', 3, 1, 3, CURRENT_TIMESTAMP)"),
                ErrorCode.CONFLICT,
                "refundId");
        expect(
                raw(
                        db,
                        null,
                        "INSERT INTO usage_refund (refund_id, deduction_id, client_id, client_seq, amount,"
                                + " refunded_after, occurred_at) VALUES ('r2', 'ghost', 'c1', 3, 1, 1, CURRENT_TIMESTAMP)"),
                ErrorCode.NOT_FOUND,
                "deductionId");

        assertThat(count(db, "SELECT COUNT(*) FROM usage_refund")).isEqualTo(1);
        assertThat(count(db, "SELECT COUNT(*) FROM usage_deduction")).isEqualTo(1);
    }

    @ParameterizedTest(autoCloseArguments = false)
    @MethodSource("databases")
    void unknownBatchStatusAndOverlongValuesAreRefused(TestDatabase db) {
        seeded(db);

        expect(
                raw(
                        db,
                        null,
                        "INSERT INTO op_batch (batch_id, status, requested_by, leader_epoch, created_at, updated_at)"
                                + " VALUES (1, 'DONE', 'alice', 0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"),
                ErrorCode.INVALID_ARGUMENT,
                "status");
        // MariaDB would silently truncate without strict mode; Dialect turns it on for every connection
        PidPoolException tooLong = raw(
                db,
                null,
                "INSERT INTO op_batch (batch_id, status, requested_by, leader_epoch, created_at, updated_at)"
                        + " VALUES (2, 'PENDING', '" + "a".repeat(129) + "', 0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)");
        assertThat(tooLong.code()).as(tooLong.getMessage()).isEqualTo(ErrorCode.INVALID_ARGUMENT);

        assertThat(count(db, "SELECT COUNT(*) FROM op_batch")).isZero();
    }

    @ParameterizedTest(autoCloseArguments = false)
    @MethodSource("databases")
    void keysAreCaseSensitiveOnEveryDatabase(TestDatabase db) {
        seeded(db);

        db.execute(List.of(String.format(PID_INSERT, "U1", FIN, 1, "ACTIVE")));

        assertThat(count(db, "SELECT COUNT(*) FROM pool_pid WHERE pid_id = 'u1'"))
                .isEqualTo(1);
        assertThat(count(db, "SELECT COUNT(*) FROM pool_pid")).isEqualTo(2);
    }
}
