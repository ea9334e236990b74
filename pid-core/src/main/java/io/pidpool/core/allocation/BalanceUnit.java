package io.pidpool.core.allocation;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A unit of a module's balance: a live instance (bound to a slot) or a vacant slot that keeps its
 * share for a replacement. The module's PIDs are split over the units by weight with largest
 * remainder ({@link #split}); what a unit keeps, is attributed and gets is tracked here.
 * Mutable; used by one plan and dropped with it.
 */
final class BalanceUnit {
    final LiveInstance live;
    /** {@code live}'s reference, made once (every step of the unit carries it). */
    final InstanceRef ref;

    final WorkSlot slot;
    final int weight;
    final int tieOrder;
    final ArrayList<String> keptAcked = new ArrayList<>();
    final ArrayList<String> keptAdding = new ArrayList<>();
    final ArrayList<String> attributedFree = new ArrayList<>();
    final ArrayList<String> attributedInFlight = new ArrayList<>();
    int floor;
    long remainder;
    int target;
    List<String> waitingFor = List.of();
    /** Its own attributed PIDs this plan adds to it: kept attributed until the adds show up. */
    List<String> givenBack = List.of();

    List<String> reservation = List.of();
    int need;

    BalanceUnit(LiveInstance live, WorkSlot slot, int weight, int tieOrder) {
        this.live = live;
        this.ref = live == null ? null : live.ref();
        this.slot = slot;
        this.weight = weight;
        this.tieOrder = tieOrder;
    }

    int kept() {
        return keptAcked.size() + keptAdding.size();
    }

    /** What the unit holds or will get without taking anything from another unit. */
    int claim() {
        return kept() + attributedFree.size() + attributedInFlight.size();
    }

    /** Unacknowledged adds go first: withdrawing them interrupts nobody's work. */
    String takeForDelete() {
        return keptAdding.isEmpty() ? keptAcked.remove(keptAcked.size() - 1) : keptAdding.remove(keptAdding.size() - 1);
    }

    /**
     * Who gets the +1s of largest-remainder rounding: larger remainder first (weights), then a unit
     * that would otherwise have to give a PID away (this is what makes the movement minimal), then
     * the larger claim (a replacement inherits its slot's whole share), then the larger holding,
     * then the earlier registration.
     */
    private static final Comparator<BalanceUnit> ROUNDING_ORDER = (a, b) -> {
        int c = Long.compare(b.remainder, a.remainder);
        if (c != 0) {
            return c;
        }
        c = Boolean.compare(b.kept() > b.floor, a.kept() > a.floor);
        if (c != 0) {
            return c;
        }
        c = Integer.compare(b.claim(), a.claim());
        if (c != 0) {
            return c;
        }
        c = Integer.compare(b.kept(), a.kept());
        return c != 0 ? c : Integer.compare(a.tieOrder, b.tieOrder);
    };

    /** Largest-remainder split of {@code total} over {@code units} by weight; sets each target. */
    static void split(long total, List<BalanceUnit> units) {
        if (units.isEmpty()) {
            return;
        }
        long weights = 0;
        for (BalanceUnit unit : units) {
            weights += unit.weight;
        }
        long given = 0;
        for (BalanceUnit unit : units) {
            long share = total * unit.weight;
            unit.floor = (int) (share / weights);
            unit.remainder = share % weights;
            unit.target = unit.floor;
            given += unit.floor;
        }
        int extra = (int) (total - given);
        if (extra > 0) {
            BalanceUnit[] byRounding = units.toArray(new BalanceUnit[0]);
            Arrays.sort(byRounding, ROUNDING_ORDER);
            for (int i = 0; i < extra; i++) {
                byRounding[i].target++;
            }
        }
    }
}
