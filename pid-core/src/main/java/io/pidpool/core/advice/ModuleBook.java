package io.pidpool.core.advice;

import io.pidpool.core.quota.OverageTariff;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One module during a {@link Recommender} run: its changes so far, its current cost, and its what-if
 * prices (a candidate leaving, a PID at some position joining), cached until it changes. It picks its
 * own candidates from its original ACTIVE PIDs sorted once by (position, id).
 *
 * <p>Not thread-safe: confined to the run's thread, like the {@code moved} array it shares with the
 * run's other books.
 */
final class ModuleBook {
    private static final int CANDIDATES = 3;

    final int index;
    final ModuleModel model;
    final boolean frozen;
    final BigDecimal originalCost;
    WaterFill.Multiset added;
    WaterFill.Multiset removed;
    int active;
    long remaining;
    BigDecimal cost;
    boolean gave;
    boolean took;

    /** Original ACTIVE PIDs by (position, id); built when first asked. */
    private int[] order;

    private long[] orderPositions;
    private int[] candidates;
    private BigDecimal[] removalDeltas;
    private final Map<Long, BigDecimal> additionDeltas = new HashMap<>();

    private final List<PidProjection> pids;
    /** Shared by every book of a run: which original PIDs moved already. */
    private final boolean[] moved;

    private final OverageTariff tariff;

    ModuleBook(
            int index,
            ModuleModel model,
            ModuleProjection projection,
            boolean frozen,
            List<PidProjection> pids,
            boolean[] moved,
            OverageTariff tariff,
            WaterFill.Multiset none) {
        this.index = index;
        this.pids = pids;
        this.moved = moved;
        this.tariff = tariff;
        this.model = model;
        this.frozen = frozen;
        this.originalCost = projection.projectedOverageCost();
        this.added = none;
        this.removed = none;
        this.active = projection.activePids();
        this.remaining = projection.remaining();
        this.cost = originalCost;
    }

    long slack() {
        return Math.max(0, remaining - model.demand());
    }

    long shortfall() {
        return Math.max(0, model.demand() - remaining);
    }

    boolean hasCandidate() {
        return candidates().length > 0;
    }

    /** Up to three unmoved original PIDs: most quota left, best fit in the slack, next bigger. */
    int[] candidates() {
        if (candidates == null) {
            sortOnce();
            int[] picked = new int[CANDIDATES];
            int count = 0;
            int first = nextUnmoved(0);
            if (first >= 0) {
                picked[count++] = order[first];
                int fit = nextUnmoved(lowerBound(-slack()));
                if (fit >= 0 && fit != first) {
                    picked[count++] = order[fit];
                }
                int bigger = previousUnmoved((fit >= 0 ? fit : order.length) - 1);
                if (bigger >= 0 && bigger != first && bigger != fit) {
                    picked[count++] = order[bigger];
                }
            }
            candidates = Arrays.copyOf(picked, count);
            removalDeltas = new BigDecimal[count];
        }
        return candidates;
    }

    /** The change of this module's cost if candidate {@code c} left. */
    BigDecimal removalDelta(int c) {
        if (removalDeltas[c] == null) {
            removalDeltas[c] =
                    model.cost(added, removed, position(candidates[c]), -1).subtract(cost);
        }
        return removalDeltas[c];
    }

    /** The change of this module's cost if a PID at position {@code x} joined. */
    BigDecimal additionDelta(long x) {
        BigDecimal delta = additionDeltas.get(x);
        if (delta == null) {
            delta = model.cost(added, removed, x, 1).subtract(cost);
            additionDeltas.put(x, delta);
        }
        return delta;
    }

    void give(long x) {
        gave = true;
        removed = removed.with(x, tariff);
        active--;
        remaining -= Math.max(0, -x);
        changed();
    }

    void take(long x) {
        took = true;
        added = added.with(x, tariff);
        active++;
        remaining += Math.max(0, -x);
        changed();
    }

    private void changed() {
        cost = model.cost(added, removed, 0, 0);
        candidates = null;
        removalDeltas = null;
        additionDeltas.clear();
    }

    /**
     * Sorts by position as primitive longs ({@code position + 2^32} in the high bits, the index
     * in the low 21), then orders runs of equal positions by PID id, so the order does not
     * depend on the snapshot's order. {@code 2^32 > -min position} and {@code 2^33 >} max
     * position {@code + 2^32}, and indices are below {@code 2^21 > UsageSnapshot.MAX_PIDS}.
     */
    private void sortOnce() {
        if (order != null) {
            return;
        }
        int[] active = model.activePids();
        long[] keys = new long[active.length];
        for (int i = 0; i < active.length; i++) {
            keys[i] = ((position(active[i]) + (1L << 32)) << 21) | i;
        }
        Arrays.sort(keys);
        order = new int[active.length];
        orderPositions = new long[active.length];
        for (int i = 0; i < keys.length; i++) {
            order[i] = active[(int) (keys[i] & ((1 << 21) - 1))];
            orderPositions[i] = position(order[i]);
        }
        for (int from = 0; from < order.length; ) {
            int to = from + 1;
            while (to < order.length && orderPositions[to] == orderPositions[from]) {
                to++;
            }
            if (to - from > 1) {
                Integer[] run = new Integer[to - from];
                for (int i = from; i < to; i++) {
                    run[i - from] = order[i];
                }
                Arrays.sort(run, Comparator.comparing(i -> pids.get(i).id()));
                for (int i = from; i < to; i++) {
                    order[i] = run[i - from];
                }
            }
            from = to;
        }
    }

    private int lowerBound(long w) {
        int lo = 0;
        int hi = orderPositions.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (orderPositions[mid] < w) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private int nextUnmoved(int from) {
        for (int i = from; i < order.length; i++) {
            if (!moved[order[i]]) {
                return i;
            }
        }
        return -1;
    }

    private int previousUnmoved(int from) {
        for (int i = from; i >= 0; i--) {
            if (!moved[order[i]]) {
                return i;
            }
        }
        return -1;
    }

    private long position(int pid) {
        PidProjection p = pids.get(pid);
        return p.used() - p.monthlyQuota();
    }
}
