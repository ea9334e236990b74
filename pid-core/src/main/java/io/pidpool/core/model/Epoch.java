package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

/**
 * The leader generation. Each new leader bumps it; it is stamped on every PID node and database
 * row the leader writes, and the SDK ignores instructions carrying an epoch lower than one it has
 * already seen.
 */
public record Epoch(long value) implements Comparable<Epoch> {
    public static final Epoch NONE = new Epoch(0);

    public Epoch {
        requireArgument(value >= 0, "epoch", "epoch must be >= 0, was %d", value);
    }

    public Epoch next() {
        return new Epoch(value + 1);
    }

    public boolean isOlderThan(Epoch other) {
        return value < other.value;
    }

    @Override
    public int compareTo(Epoch other) {
        return Long.compare(value, other.value);
    }
}
