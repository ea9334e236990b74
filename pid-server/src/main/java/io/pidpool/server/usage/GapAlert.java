package io.pidpool.server.usage;

/**
 * Sequence numbers of one client in one shard that the database ledger has not received and that
 * could not be found in the Redis stream any more: an alert-worthy condition. Usage these events
 * carried may still have been recovered from the month's deduction records (see {@link
 * SyncReport#recoveredFromRecords()}), but that cannot be matched to the numbers.
 *
 * @param dbClientId the client id the database ledger numbers this source under
 */
public record GapAlert(int shard, String incarnation, String clientId, String dbClientId, long fromSeq, long toSeq) {
    public long size() {
        return toSeq - fromSeq + 1;
    }
}
