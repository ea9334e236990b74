package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.AuditLog;
import io.pidpool.core.port.StorageLimits;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** What every {@link AuditLog} does. */
public abstract class AuditLogContract extends RepositoryContract {

    private AuditLog audit() {
        return repos.audit();
    }

    private AuditEntry entry(long id, Instant at, String target) {
        return new AuditEntry(id, at, "alice", "batch.accepted", target, "3 operations, 12 PIDs");
    }

    @Test
    void recentEntriesComeNewestFirstByTimeThenId() {
        Instant t0 = clock.instant();
        var a = entry(10, t0, "batch:1");
        var b = entry(5, t0.plusSeconds(1), "batch:2");
        var c = entry(20, t0.plusSeconds(1), "module:fin#risk#scorer");
        var d = entry(1, t0.minusSeconds(60), "batch:1");
        for (AuditEntry e : new AuditEntry[] {a, b, c, d}) {
            audit().append(e);
        }

        assertThat(audit().recent(10)).containsExactly(c, b, a, d);
        assertThat(audit().recent(2)).containsExactly(c, b);
        assertThat(audit().forTarget("batch:1", 10)).containsExactly(a, d);
        assertThat(audit().forTarget("batch:9", 10)).isEmpty();
    }

    @Test
    void pagesFollowOneAnotherWithoutGapOrRepeatAcrossEqualTimes() {
        Instant t0 = clock.instant();
        var a = entry(10, t0, "batch:1");
        var b = entry(5, t0.plusSeconds(1), "batch:2");
        var c = entry(20, t0.plusSeconds(1), "batch:3");
        var d = entry(1, t0.minusSeconds(60), "batch:4");
        var e = entry(7, t0.plusSeconds(1), "batch:5");
        for (AuditEntry x : new AuditEntry[] {a, b, c, d, e}) {
            audit().append(x);
        }
        // newest first: c (t0+1, 20), e (t0+1, 7), b (t0+1, 5), a (t0, 10), d (t0-60, 1)
        assertThat(audit().recent(2)).containsExactly(c, e);
        assertThat(audit().olderThan(7, 2)).containsExactly(b, a);
        assertThat(audit().olderThan(10, 2)).containsExactly(d);
        assertThat(audit().olderThan(1, 2)).isEmpty();
        assertThat(audit().olderThan(20, 10)).containsExactly(e, b, a, d);
        assertThat(audit().olderThan(999, 10)).as("no such entry").isEmpty();
    }

    @Test
    void aDuplicateIdIsAConflictAndTheFirstStays() {
        var first = entry(1, clock.instant(), "batch:1");
        audit().append(first);

        expectError(ErrorCode.CONFLICT, "id", () -> audit().append(
                        entry(1, clock.instant().plus(Duration.ofHours(1)), "x")));

        assertThat(audit().recent(10)).containsExactly(first);
    }

    @Test
    void detailIsCutAndTimeKeptToTheMillisecond() {
        var e = new AuditEntry(
                1, Instant.parse("2025-07-09T08:00:00.123456789Z"), "ops-bot", "module.put", "", "d".repeat(9000));
        audit().append(e);

        AuditEntry stored = audit().recent(1).get(0);
        assertThat(stored.detail()).hasSize(StorageLimits.MAX_AUDIT_DETAIL);
        assertThat(stored.at()).isEqualTo(Instant.parse("2025-07-09T08:00:00.123Z"));
        assertThat(stored).isEqualTo(e);
        expectError(ErrorCode.INVALID_ARGUMENT, "actor", () -> new AuditEntry(2, clock.instant(), "", "x", "", ""));
    }
}
