package io.pidpool.core.id;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.UniqueElements;

/** Snowflake ids under scripted clocks that stand still, creep, jump ahead and step back. */
class SnowflakeIdsProperties {
    private static final long START = SnowflakeIds.DEFAULT_EPOCH.toEpochMilli() + 86_400_000L;

    /** One clock move followed by a burst of calls. */
    record Step(long clockDelta, int calls) {}

    @Provide
    Arbitrary<List<Step>> clockScripts() {
        Arbitrary<Long> delta = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, Arbitraries.just(0L)),
                net.jqwik.api.Tuple.of(6, Arbitraries.longs().between(1, 3)),
                net.jqwik.api.Tuple.of(2, Arbitraries.longs().between(4, 5_000)),
                // step-backs: small ones the lead absorbs, large ones it must refuse
                net.jqwik.api.Tuple.of(3, Arbitraries.longs().between(-40, -1)),
                net.jqwik.api.Tuple.of(1, Arbitraries.longs().between(-10_000, -41)));
        Arbitrary<Integer> calls = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(30, Arbitraries.integers().between(1, 40)),
                // enough to fill a millisecond and borrow the next
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(4_090, 8_200)));
        return Combinators.combine(delta, calls)
                .as(Step::new)
                .list()
                .ofMinSize(1)
                .ofMaxSize(25);
    }

    @Property(tries = 1000)
    void idsOfOneGeneratorStrictlyIncreaseAndAreRefusedOnlyWhenTheLeadWouldBeExceeded(
            @ForAll("clockScripts") List<Step> script,
            @ForAll @IntRange(min = 0, max = 50) int maxLeadMillis,
            @ForAll @IntRange(min = 0, max = 31) int workerId) {
        long[] clock = {START};
        SnowflakeIds ids = SnowflakeIds.builder()
                .clockMillis(() -> clock[0])
                .workerId(workerId)
                .maxLead(Duration.ofMillis(maxLeadMillis))
                .maxWait(Duration.ZERO)
                .build();
        long previous = -1;
        for (Step step : script) {
            clock[0] += step.clockDelta();
            for (int i = 0; i < step.calls(); i++) {
                long lastTimestamp = ids.lastTimestampMillis();
                boolean sequenceFull = previous >= 0 && ids.decode(previous).sequence() == SnowflakeIds.MAX_SEQUENCE;
                long behind = lastTimestamp - clock[0];
                boolean mustRefuse = behind > maxLeadMillis || (behind == maxLeadMillis && sequenceFull);
                long id;
                try {
                    id = ids.nextId();
                } catch (PidPoolException e) {
                    assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                    assertThat(mustRefuse)
                            .as("refused with the clock %d ms behind", behind)
                            .isTrue();
                    assertThat(ids.lastTimestampMillis()).isEqualTo(lastTimestamp);
                    break; // the rest of this burst would be refused the same way
                }
                // plain checks: this loop runs millions of times, AssertJ per id would dominate
                SnowflakeId parts = ids.decode(id);
                if (mustRefuse
                        || id <= previous
                        || parts.workerId() != workerId
                        || parts.timestampMillis() - clock[0] > maxLeadMillis
                        || parts.timestampMillis() != ids.lastTimestampMillis()) {
                    throw new AssertionError(String.format(
                            "id %d after %d: %s with the clock at %d (%d ms behind, maxLead %d)",
                            id, previous, parts, clock[0], behind, maxLeadMillis));
                }
                previous = id;
            }
        }
    }

    @Property(tries = 1000)
    void generatorsWithDifferentWorkerIdsNeverCollide(
            @ForAll("clockScripts") List<Step> script,
            @ForAll @Size(min = 2, max = 4) @UniqueElements List<@IntRange(min = 0, max = 31) Integer> workerIds,
            @ForAll @IntRange(min = 0, max = 31) int datacenterId) {
        long[] clock = {START};
        List<SnowflakeIds> generators = workerIds.stream()
                .map(w -> SnowflakeIds.builder()
                        .clockMillis(() -> clock[0])
                        .datacenterId(datacenterId)
                        .workerId(w)
                        .maxLead(Duration.ofMillis(5))
                        .maxWait(Duration.ZERO)
                        .build())
                .toList();
        Set<Long> seen = new HashSet<>();
        for (Step step : script) {
            clock[0] += step.clockDelta();
            // interleave the generators on the same clock, each capped so the property stays cheap;
            // a refused generator sits out the rest of the step (it would only be refused again)
            Set<SnowflakeIds> refusedNow = new HashSet<>();
            for (int i = 0; i < Math.min(step.calls(), 50); i++) {
                for (SnowflakeIds g : generators) {
                    if (refusedNow.contains(g)) {
                        continue;
                    }
                    try {
                        long id = g.nextId();
                        if (!seen.add(id) || g.decode(id).workerId() != g.workerId()) {
                            throw new AssertionError("id " + id + " seen twice or with the wrong worker id");
                        }
                    } catch (PidPoolException refused) {
                        refusedNow.add(g);
                        assertThat(refused.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                    }
                }
            }
        }
    }
}
