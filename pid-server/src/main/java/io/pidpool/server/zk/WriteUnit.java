package io.pidpool.server.zk;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A unit of a {@link FencedWriter}: writes that must commit together, the future of their results,
 * and the largest multi-op it may travel in: {@code maxOpsPerMulti} at first, halved each time it was
 * behind a failed write (ZooKeeper reports only the first failing operation of a multi-op and does
 * not evaluate the rest), so several stale units in one multi-op are isolated by bisection in
 * O(k log n) round trips instead of one round trip (and one full resend) per unit.
 */
final class WriteUnit {
    private final List<ZkWrite> writes;
    private final CompletableFuture<List<WriteResult>> future;
    /** {@link ZkWrite#size()} summed once (a unit may be looked at by several takes). */
    private final int bytes;

    private int cap;

    WriteUnit(List<ZkWrite> writes, CompletableFuture<List<WriteResult>> future, int cap) {
        this.writes = writes;
        this.future = future;
        this.cap = cap;
        int sum = 0;
        for (ZkWrite write : writes) {
            sum += write.size();
        }
        this.bytes = sum;
    }

    List<ZkWrite> writes() {
        return writes;
    }

    CompletableFuture<List<WriteResult>> future() {
        return future;
    }

    int bytes() {
        return bytes;
    }

    /** The most operations (epoch check included) of a multi-op this unit may travel in. */
    int cap() {
        return cap;
    }

    /** Halving step of the bisection: never raises the cap. */
    void capAt(int ops) {
        cap = Math.min(cap, ops);
    }
}
