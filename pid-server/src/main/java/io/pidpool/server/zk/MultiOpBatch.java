package io.pidpool.server.zk;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.zookeeper.KeeperException.Code;

/**
 * One multi-op of a {@link FencedWriter}: the epoch check, then the writes of its units in order. It
 * maps ZooKeeper's per-operation answer back to the units: each unit's results when the multi-op
 * committed; when one write failed, the unit it belongs to and the units to send again, those behind
 * the failed write in multi-ops of half the size (bisection, see {@link WriteUnit}).
 */
final class MultiOpBatch {
    private final List<WriteUnit> units;
    /** Operations of the multi-op, the epoch check included. */
    private final int size;

    MultiOpBatch(List<WriteUnit> units) {
        this.units = units;
        int ops = 1;
        for (WriteUnit unit : units) {
            ops += unit.writes().size();
        }
        this.size = ops;
    }

    List<WriteUnit> units() {
        return units;
    }

    /** Operations of the multi-op, the epoch check included. */
    int size() {
        return size;
    }

    /** The operations to send: {@code check} first, then every unit's writes. */
    List<ZkWrite> ops(ZkWrite.Check check) {
        List<ZkWrite> ops = new ArrayList<>(size);
        ops.add(check);
        for (WriteUnit unit : units) {
            ops.addAll(unit.writes());
        }
        return ops;
    }

    /** Hands each unit its results of a committed multi-op (creates carry the new node's stat). */
    void committed(List<MultiOpSession.OpOutcome> results, BiConsumer<WriteUnit, List<WriteResult>> each) {
        int index = 1;
        for (WriteUnit unit : units) {
            List<WriteResult> unitResults = new ArrayList<>(unit.writes().size());
            for (ZkWrite write : unit.writes()) {
                unitResults.add(new WriteResult(write, results.get(index++).stat()));
            }
            each.accept(unit, unitResults);
        }
    }

    /**
     * The index of the operation that failed the multi-op, or -1 when none names its own failure;
     * the operations ZooKeeper did not evaluate answer RUNTIMEINCONSISTENCY.
     */
    static int firstFailure(List<MultiOpSession.OpOutcome> results) {
        for (int i = 0; i < results.size(); i++) {
            int code = results.get(i).code();
            if (code != Code.OK.intValue() && code != Code.RUNTIMEINCONSISTENCY.intValue()) {
                return i;
            }
        }
        return -1;
    }

    /** The unit whose write is operation {@code opIndex} (0 is the epoch check, which has none). */
    WriteUnit unitAt(int opIndex) {
        int index = 1;
        for (WriteUnit unit : units) {
            if (opIndex < index + unit.writes().size()) {
                return unit;
            }
            index += unit.writes().size();
        }
        throw new IllegalStateException("op " + opIndex + " is beyond the multi-op");
    }

    /** The write that is operation {@code opIndex}. */
    ZkWrite writeAt(int opIndex) {
        int index = 1;
        for (WriteUnit unit : units) {
            if (opIndex < index + unit.writes().size()) {
                return unit.writes().get(opIndex - index);
            }
            index += unit.writes().size();
        }
        throw new IllegalStateException("op " + opIndex + " is beyond the multi-op");
    }

    /**
     * The units to send again after {@code culprit}'s write failed, in their order: none of them was
     * applied. Those before the culprit passed their checks and go as they were; those after it were
     * not evaluated and may hold more stale writes, so they travel in halved multi-ops.
     */
    List<WriteUnit> resendWithout(WriteUnit culprit) {
        int half = Math.max(2, size / 2);
        List<WriteUnit> again = new ArrayList<>(units.size());
        boolean after = false;
        for (WriteUnit unit : units) {
            if (unit == culprit) {
                after = true;
            } else {
                if (after) {
                    unit.capAt(half);
                }
                again.add(unit);
            }
        }
        return again;
    }
}
