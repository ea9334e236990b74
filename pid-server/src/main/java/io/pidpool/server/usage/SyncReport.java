package io.pidpool.server.usage;

import java.util.List;

/**
 * What one sync pass over a shard did.
 *
 * @param eventsRead stream entries read after the committed offset
 * @param recorded deductions and refunds newly written to the database ledger
 * @param duplicates events the database already had (a replay after a crash before the ack)
 * @param resets reset events (not ledger entries; their sequence numbers are remembered as covered)
 * @param streamGaps sequence gaps seen while reading (a number skipped within the pages read)
 * @param compensatedFromStream missing events found again by sequence number in the stream
 * @param recoveredFromRecords deductions/refunds written from the month hashes in Redis because
 *     their events were gone
 * @param alerts gaps that could not be filled from the stream (alert-worthy)
 * @param orphans events that could not be written (refund of an unknown deduction, content
 *     conflicts); acknowledged anyway so the shard is not blocked, logged, raised as an alert, and
 *     reconciled: the ledger catches up from the PID-month's records in Redis
 * @param caughtUp whether the pass reached the end of the stream (gap checks only run then)
 * @param incarnationChanged the shard's sequence incarnation differs from the one seen last pass
 * @param stillDrifting PID-months of orphaned events whose records in Redis and the ledger still
 *     differ after the ledger caught up from Redis (one line each, with the first difference)
 */
public record SyncReport(
        int shard,
        String incarnation,
        int eventsRead,
        int recorded,
        int duplicates,
        int resets,
        int streamGaps,
        int compensatedFromStream,
        int recoveredFromRecords,
        List<GapAlert> alerts,
        List<String> orphans,
        boolean caughtUp,
        boolean incarnationChanged,
        List<String> stillDrifting) {
    public SyncReport {
        alerts = List.copyOf(alerts);
        orphans = List.copyOf(orphans);
        stillDrifting = List.copyOf(stillDrifting);
    }

    /** A report without ledger drift (the form every pass had before drift was reconciled). */
    public SyncReport(
            int shard,
            String incarnation,
            int eventsRead,
            int recorded,
            int duplicates,
            int resets,
            int streamGaps,
            int compensatedFromStream,
            int recoveredFromRecords,
            List<GapAlert> alerts,
            List<String> orphans,
            boolean caughtUp,
            boolean incarnationChanged) {
        this(
                shard,
                incarnation,
                eventsRead,
                recorded,
                duplicates,
                resets,
                streamGaps,
                compensatedFromStream,
                recoveredFromRecords,
                alerts,
                orphans,
                caughtUp,
                incarnationChanged,
                List.of());
    }

    /** Whether an operator should look: unfillable gaps, orphans or a lost sequence hash. */
    public boolean alertWorthy() {
        return !alerts.isEmpty() || !orphans.isEmpty() || incarnationChanged;
    }
}
