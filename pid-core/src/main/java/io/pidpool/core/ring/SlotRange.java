package io.pidpool.core.ring;

import static io.pidpool.core.error.Preconditions.requireArgument;

/**
 * A half-open interval {@code [start, end)} of the slot space {@code [0, 2^32)}. A range never
 * wraps: the ring's wrap-around arc is reported as two ranges, {@code [last, 2^32)} and
 * {@code [0, first)}, so each range maps directly onto {@code slot >= ? AND slot < ?}.
 */
public record SlotRange(long start, long end) implements Comparable<SlotRange> {
    public SlotRange {
        requireArgument(
                start >= 0 && start < end && end <= ConsistentHashRing.SLOT_COUNT,
                "range",
                "a slot range needs 0 <= start < end <= 2^32, was [%d, %d)",
                start,
                end);
    }

    /** The whole slot space {@code [0, 2^32)}. */
    public static SlotRange all() {
        return new SlotRange(0, ConsistentHashRing.SLOT_COUNT);
    }

    /** Number of slots in the range. */
    public long size() {
        return end - start;
    }

    public boolean contains(long slot) {
        return slot >= start && slot < end;
    }

    @Override
    public int compareTo(SlotRange other) {
        int c = Long.compare(start, other.start);
        return c != 0 ? c : Long.compare(end, other.end);
    }

    @Override
    public String toString() {
        return "[" + start + ", " + end + ")";
    }
}
