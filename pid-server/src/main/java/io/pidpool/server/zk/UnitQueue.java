package io.pidpool.server.zk;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The units a {@link FencedWriter} has not sent yet, in submission order, and how the next multi-op
 * is packed from its head: as many units as fit in {@code maxOps} operations (the epoch check
 * included) and {@code maxBytes}, and in the smallest {@link WriteUnit#cap() cap} of the units taken;
 * never fewer than one unit.
 *
 * <p>Not thread-safe: the writer guards it with its lock.
 */
final class UnitQueue {
    private final ArrayDeque<WriteUnit> queue = new ArrayDeque<>();
    private final int maxOps;
    private final int maxBytes;
    /** What the epoch check takes of a multi-op's bytes. */
    private final int checkBytes;

    private int ops;

    UnitQueue(int maxOps, int maxBytes, int checkBytes) {
        this.maxOps = maxOps;
        this.maxBytes = maxBytes;
        this.checkBytes = checkBytes;
    }

    void add(WriteUnit unit) {
        queue.addLast(unit);
        ops += unit.writes().size();
    }

    /** Writes queued, all units together. */
    int ops() {
        return ops;
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    /** Takes the units of the next multi-op from the head of the queue. */
    List<WriteUnit> take() {
        List<WriteUnit> batch = new ArrayList<>();
        int batchOps = 1;
        int bytes = checkBytes;
        int cap = maxOps;
        while (!queue.isEmpty()) {
            WriteUnit next = queue.peekFirst();
            int unitOps = next.writes().size();
            int capWith = Math.min(cap, next.cap());
            if (!batch.isEmpty() && (batchOps + unitOps > capWith || bytes + next.bytes() > maxBytes)) {
                break;
            }
            queue.pollFirst();
            ops -= unitOps;
            batch.add(next);
            batchOps += unitOps;
            bytes += next.bytes();
            cap = capWith;
        }
        return batch;
    }

    /** Puts units that must be sent again back at the head, in their order, before everything queued. */
    void putFront(List<WriteUnit> units) {
        for (int i = units.size() - 1; i >= 0; i--) {
            queue.addFirst(units.get(i));
            ops += units.get(i).writes().size();
        }
    }

    /** Empties the queue; returns what it held, in order. */
    List<WriteUnit> drain() {
        List<WriteUnit> all = new ArrayList<>(queue);
        queue.clear();
        ops = 0;
        return all;
    }
}
