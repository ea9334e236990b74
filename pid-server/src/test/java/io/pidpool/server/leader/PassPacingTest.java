package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The leader's pass pacing on hand-set time: debounce, coalescing, full passes, placement spacing. */
class PassPacingTest {
    private static final long MS = 1_000_000L;
    private static final long S = 1_000_000_000L;

    private record Scheduled(Runnable task, long delay) {}

    private final List<Scheduled> scheduled = new ArrayList<>();
    private int passes;
    private final PassPacing pacing =
            new PassPacing((task, delay) -> scheduled.add(new Scheduled(task, delay)), () -> passes++);

    @Test
    void aBurstOfRequestsSchedulesOnePassAfterTheDebounce() {
        pacing.request();
        pacing.request();
        pacing.request();

        assertThat(scheduled).singleElement().extracting(Scheduled::delay).isEqualTo(PassPacing.PASS_DEBOUNCE_NANOS);
        scheduled.get(0).task().run();
        assertThat(passes).isEqualTo(1);

        pacing.started(); // the pass runs: the next request schedules again
        pacing.request();
        assertThat(scheduled).hasSize(2);
    }

    @Test
    void anAppliedBatchIsReconciledAtOnceEvenAfterAnExpensivePassAndTheDebouncedPassIsSkipped() {
        pacing.started();
        pacing.finished(pacing.plan(0, 1), 300 * MS, 450 * MS);
        pacing.request(); // an event: spaced by the last pass's cost

        pacing.requestNow(); // a batch was applied
        pacing.requestNow();

        assertThat(scheduled).extracting(Scheduled::delay).containsExactly(450 * MS - PassPacing.FREE_COST_NANOS, 0L);
        scheduled.get(1).task().run();
        pacing.started();
        scheduled.get(0).task().run(); // superseded
        assertThat(passes).isEqualTo(1);

        pacing.requestNow(); // the next batch, after that pass began
        assertThat(scheduled).hasSize(3);
        scheduled.get(2).task().run();
        assertThat(passes).isEqualTo(2);
    }

    @Test
    void anExpensivePassSpacesTheNextOneByItsCostAboveTheFreeShare() {
        pacing.started();
        PassPacing.Plan plan = pacing.plan(0, 1);
        pacing.finished(plan, 300 * MS, 450 * MS);

        pacing.request();

        assertThat(scheduled.get(0).delay()).isEqualTo(450 * MS - PassPacing.FREE_COST_NANOS);
    }

    @Test
    void theFirstPassIsFullAndPlacesThenOnlyAStructuralChangeOrTheIntervalPlacesAgain() {
        PassPacing.Plan first = pacing.plan(0, 7);
        assertThat(first.full()).isTrue();
        assertThat(first.placement()).isTrue();
        pacing.finished(first, 0, 0);

        PassPacing.Plan quiet = pacing.plan(100 * MS, 7);
        assertThat(quiet.full()).isFalse();
        assertThat(quiet.placement()).isFalse();

        assertThat(pacing.plan(200 * MS, 8).placement()).isTrue(); // the structure changed

        pacing.requestPlacement(); // a write failed
        assertThat(pacing.plan(300 * MS, 8).placement()).isTrue();

        PassPacing.Plan late = pacing.plan(1_000 * MS, 8);
        assertThat(late.full()).isTrue(); // a full pass at least every second
    }

    @Test
    void anExpectedStructuralChangeNeedsNoNewPlacement() {
        pacing.finished(pacing.plan(0, 7), 0, 0);
        assertThat(pacing.placedAt(7)).isTrue();

        pacing.placed(8); // the add the placement counted landed
        assertThat(pacing.plan(100 * MS, 8).placement()).isFalse();
    }

    @Test
    void anExpensivePlacementComesBackByItselfWhenItIsDue() {
        PassPacing.Plan first = pacing.plan(0, 7);
        pacing.finished(first, 250 * MS, 250 * MS); // the placement cost 250 ms

        PassPacing.Plan next = pacing.plan(100 * MS, 8); // a change, but the placement is not due yet
        assertThat(next.placement()).isFalse();
        long due = PassPacing.PLACEMENT_COST_FACTOR * (250 * MS - PassPacing.FREE_COST_NANOS);
        assertThat(scheduled).singleElement().extracting(Scheduled::delay).isEqualTo(due - 100 * MS);

        scheduled.get(0).task().run(); // the timer asks for a pass
        assertThat(scheduled).hasSize(2);
        assertThat(pacing.plan(due, 8).placement()).isTrue();
    }

    @Test
    void nothingIsScheduledOnceTheTermEnded() {
        pacing.close();
        pacing.request();
        assertThat(scheduled).isEmpty();
    }

    @Test
    void aPassThatFailedHalfWayDoesNotCountAsFull() {
        pacing.finished(pacing.plan(0, 7), 0, 0);
        pacing.requestFull();
        assertThat(pacing.plan(900 * MS, 7).full()).isTrue(); // decide threw: finished() is never called

        // the full pass is due a second after the last one that completed, not after the failed one
        assertThat(pacing.plan(1 * S, 7).full()).isTrue();
    }
}
