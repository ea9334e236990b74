package io.pidpool.core.model;

/** A batch id: a Snowflake id, so batches sort by the time they were accepted. */
public record BatchId(long value) implements Comparable<BatchId> {
    @Override
    public int compareTo(BatchId other) {
        return Long.compare(value, other.value);
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
