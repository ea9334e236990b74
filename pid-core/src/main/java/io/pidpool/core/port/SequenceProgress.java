package io.pidpool.core.port;

/**
 * What the ledger has received from one client: every sequence number up to
 * {@code contiguousThrough}, and some up to {@code highestSeen}.
 */
public record SequenceProgress(String clientId, long contiguousThrough, long highestSeen) {
    /** Whether some number below {@code highestSeen} is missing. */
    public boolean hasGaps() {
        return highestSeen > contiguousThrough;
    }
}
