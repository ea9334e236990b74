package io.pidpool.worker.task;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.ring.SlotRange;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a worker polls for a set of task types: the tasks whose type is one of {@code types} and
 * whose slot lies in one of {@code ranges}. Types run by the same members share one ring and so one
 * {@code TypedRanges} (docs/worker.md §3).
 *
 * @param types task types, at least one, kept sorted
 * @param ranges slot ranges, possibly none
 */
public record TypedRanges(Set<String> types, List<SlotRange> ranges) {
    public TypedRanges {
        requireNonNull(types, "types");
        requireArgument(!types.isEmpty(), "types", "at least one task type is required");
        types = Collections.unmodifiableSet(new TreeSet<>(types));
        ranges = List.copyOf(requireNonNull(ranges, "ranges"));
    }

    public static TypedRanges of(Set<String> types, List<SlotRange> ranges) {
        return new TypedRanges(types, ranges);
    }

    /** Whether a task of {@code type} in {@code slot} is selected. */
    public boolean contains(String type, long slot) {
        return types.contains(type) && ranges.stream().anyMatch(r -> r.contains(slot));
    }
}
