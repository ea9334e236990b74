package io.pidpool.core.allocation;

import java.util.Collection;

/** The arithmetic the planner must meet, computed independently of it. */
final class Theory {
    private Theory() {}

    /**
     * The fewest PIDs that must move when {@code total} PIDs are split evenly (within 1) over
     * instances currently holding {@code counts} (a joiner holds 0): every instance above the
     * target gives its surplus, and the {@code total mod n} larger targets go to instances that
     * would otherwise give one away.
     */
    static int minimumMoves(Collection<Integer> counts, int total) {
        int n = counts.size();
        int floor = total / n;
        int ceilings = total % n;
        int surplus = 0;
        int aboveFloor = 0;
        for (int count : counts) {
            surplus += Math.max(0, count - floor);
            if (count > floor) {
                aboveFloor++;
            }
        }
        return surplus - Math.min(ceilings, aboveFloor);
    }
}
