package io.pidpool.server.leader;

/** Reads the current leader term's writer counters. */
record FencedWriterStats(long multis, long ops) {
    static FencedWriterStats of(ClusterMember node) {
        var writer = node.currentWriter();
        return writer == null
                ? new FencedWriterStats(0, 0)
                : new FencedWriterStats(writer.multisSent(), writer.opsSent());
    }
}
