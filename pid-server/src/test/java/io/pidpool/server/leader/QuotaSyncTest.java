package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link QuotaSync} with a recording provisioner and a manual scheduler: no threads, no sleep. */
class QuotaSyncTest {
    static final Instant T0 = Instant.parse("2026-11-21T10:00:00Z");
    static final Duration RETRY = Duration.ofSeconds(7);

    /** An in-memory ledger: limits, resets, calls; can be switched to fail like a Redis that is down. */
    static final class FakeLedger implements QuotaProvisioner {
        final Map<String, Long> limits = new HashMap<>();
        final List<String> calls = new ArrayList<>();
        boolean down;

        Epoch fencedAt = Epoch.NONE;

        @Override
        public void setLimits(Map<String, Long> hardLimits, Epoch leaderEpoch) {
            fail();
            if (leaderEpoch.isOlderThan(fencedAt)) {
                calls.add("refused " + new java.util.TreeMap<>(hardLimits) + " of epoch " + leaderEpoch.value());
                throw new PidPoolException(ErrorCode.FENCED, "epoch", "a newer leader wrote limits");
            }
            fencedAt = leaderEpoch;
            calls.add("set " + new java.util.TreeMap<>(hardLimits));
            limits.putAll(hardLimits);
        }

        @Override
        public void fenceLimits(Epoch leaderEpoch) {
            fail();
            if (leaderEpoch.isOlderThan(fencedAt)) {
                throw new PidPoolException(ErrorCode.FENCED, "epoch", "a newer leader fenced the limits");
            }
            fencedAt = leaderEpoch;
            calls.add("fence " + leaderEpoch.value());
        }

        @Override
        public void reset(Collection<String> pidIds, Instant at) {
            fail();
            calls.add("reset " + pidIds + " @" + at);
        }

        @Override
        public Map<String, Long> limits() {
            fail();
            calls.add("read");
            return new HashMap<>(limits);
        }

        private void fail() {
            if (down) {
                throw PidPoolException.unavailable("redis is down", null);
            }
        }
    }

    record Scheduled(Runnable task, long delayMillis) {}

    final FakeLedger ledger = new FakeLedger();
    final Deque<Scheduled> queue = new ArrayDeque<>();
    final QuotaSync sync = new QuotaSync(ledger, RETRY, (task, delay) -> queue.add(new Scheduled(task, delay)));

    /** Runs what is scheduled (and what that schedules) until nothing is left; bounded. */
    List<Long> runAll() {
        List<Long> delays = new ArrayList<>();
        for (int i = 0; i < 100 && !queue.isEmpty(); i++) {
            Scheduled next = queue.poll();
            delays.add(next.delayMillis());
            next.task().run();
        }
        assertThat(queue).isEmpty();
        return delays;
    }

    @Test
    void committedLimitsAndResetsReachTheProvisionerInOneDrain() {
        sync.committed(Map.of("a", 50L, "b", 0L), List.of("c", "d"), T0);
        sync.committed(Map.of("a", 80L), List.of(), T0.plusSeconds(1));

        assertThat(queue).hasSize(1); // coalesced
        runAll();

        assertThat(ledger.limits).containsOnly(entry("a", 80L), entry("b", 0L));
        assertThat(ledger.calls).containsExactly("reset [c, d] @" + T0, "set {a=80, b=0}");
        assertThat(sync.idle()).isTrue();
    }

    @Test
    void whileTheProvisionerFailsEverythingIsKeptAndRetriedAfterTheDelay() {
        ledger.down = true;
        sync.committed(Map.of("a", 50L), List.of("a"), T0);
        sync.reconcile(Map.of("a", 50L, "b", 9L));

        Scheduled first = queue.poll();
        first.task().run();
        assertThat(ledger.calls).isEmpty();
        assertThat(queue).singleElement().extracting(Scheduled::delayMillis).isEqualTo(RETRY.toMillis());
        assertThat(sync.idle()).isFalse();
        queue.poll().task().run(); // still down: retried again
        assertThat(queue).singleElement().extracting(Scheduled::delayMillis).isEqualTo(RETRY.toMillis());

        ledger.down = false;
        runAll();

        // the reset keeps the time of the commit, so a late retry still clears the month meant
        assertThat(ledger.calls).containsExactly("reset [a] @" + T0, "read", "set {a=50, b=9}");
        assertThat(sync.idle()).isTrue();
        assertThat(sync.reconciliations()).isEqualTo(1);
    }

    @Test
    void reconciliationWritesOnlyDifferencesAndZeroesPidsTheDatabaseNoLongerHas() {
        ledger.limits.putAll(Map.of("same", 5L, "changed", 10L, "gone", 7L, "goneZero", 0L, "junk", -1L));

        sync.reconcile(Map.of("same", 5L, "changed", 20L, "missing", 3L, "junk", 4L));
        runAll();

        assertThat(ledger.calls).containsExactly("read", "set {changed=20, gone=0, junk=4, missing=3}");
        assertThat(sync.corrections()).isEqualTo(4);

        ledger.calls.clear();
        sync.reconcile(Map.of("same", 5L, "changed", 20L, "missing", 3L, "junk", 4L));
        runAll();
        assertThat(ledger.calls).containsExactly("read"); // nothing to correct: no epoch bumps
    }

    @Test
    void aChangeCommittedAfterAReconciliationSnapshotWins() {
        sync.reconcile(Map.of("a", 50L)); // snapshot taken before the UPDATE
        sync.committed(Map.of("a", 80L), List.of(), T0); // the UPDATE
        runAll();
        assertThat(ledger.limits).containsEntry("a", 80L);

        // and a snapshot taken after a change supersedes the change still waiting
        ledger.down = true;
        sync.committed(Map.of("b", 1L), List.of(), T0);
        sync.reconcile(Map.of("a", 80L, "b", 2L));
        ledger.down = false;
        runAll();
        assertThat(ledger.limits).containsEntry("b", 2L);
    }

    @Test
    void aChangeArrivingDuringAReconciliationIsNotLost() {
        ledger.limits.put("a", 50L);
        // the reconciliation's read happens, then the leader commits an UPDATE before the write
        QuotaSync racing = new QuotaSync(
                new QuotaProvisioner() {
                    @Override
                    public void setLimits(Map<String, Long> hardLimits, Epoch leaderEpoch) {
                        ledger.setLimits(hardLimits, leaderEpoch);
                    }

                    @Override
                    public void reset(Collection<String> pidIds, Instant at) {}

                    @Override
                    public Map<String, Long> limits() {
                        Map<String, Long> read = ledger.limits();
                        if (ledger.calls.size() == 1) { // the first read only
                            holder[0].committed(Map.of("a", 90L), List.of(), T0);
                        }
                        return read;
                    }
                },
                RETRY,
                (task, delay) -> queue.add(new Scheduled(task, delay)));
        holder[0] = racing;
        racing.reconcile(Map.of("a", 60L));
        runAll();
        assertThat(ledger.limits).containsEntry("a", 90L);
        assertThat(racing.idle()).isTrue();
    }

    final QuotaSync[] holder = new QuotaSync[1];

    @Test
    void theEndOfATermDropsLimitsButKeepsCommittedResets() {
        ledger.down = true;
        sync.committed(Map.of("a", 50L), List.of("r"), T0);
        sync.reconcile(Map.of("a", 50L));
        queue.poll().task().run();

        sync.termEnded();
        ledger.down = false;
        runAll();

        assertThat(ledger.calls).containsExactly("reset [r] @" + T0);
        assertThat(sync.idle()).isTrue();
    }

    @Test
    void theLoggingProvisionerIsNeverReconciled() {
        QuotaSync logging = new QuotaSync(
                QuotaProvisioner.logging(), RETRY, (task, delay) -> queue.add(new Scheduled(task, delay)));
        logging.reconcile(Map.of("a", 1L));
        assertThat(queue).isEmpty();
        assertThat(logging.idle()).isTrue();
    }

    @Test
    void aTermFencesTheLimitsBeforeItsFirstLimitWrite() {
        sync.termBegan(new Epoch(2));
        sync.committed(Map.of("a", 50L), List.of(), T0);
        runAll();

        assertThat(ledger.calls).containsExactly("fence 2", "set {a=50}");
        assertThat(sync.idle()).isTrue();
    }

    @Test
    void aDeposedTermsLimitWriteIsRefusedOnceAndNotRetried() {
        sync.termBegan(new Epoch(1));
        runAll();
        ledger.fencedAt = new Epoch(2); // the successor fenced the limits and lowered one
        ledger.limits.put("a", 10L);

        sync.committed(Map.of("a", 500L), List.of(), T0); // the deposed leader's drain, late
        List<Long> delays = runAll();

        assertThat(delays).containsExactly(0L); // no retry
        assertThat(ledger.limits).containsEntry("a", 10L);
        assertThat(ledger.calls).contains("refused {a=500} of epoch 1");
        assertThat(sync.refused()).isEqualTo(1);
        assertThat(sync.idle()).isTrue();
    }
}
