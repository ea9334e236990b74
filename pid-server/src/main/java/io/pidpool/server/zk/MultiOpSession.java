package io.pidpool.server.zk;

import java.util.List;

/**
 * What {@link FencedWriter} needs of the leader's ZooKeeper client: the id of its current session and
 * an asynchronous multi-op. {@link ZooKeeperMultiOps} is the production adapter; the protocol
 * simulation drives the writer over a simulated ZooKeeper through the same port.
 *
 * <p>Result codes are ZooKeeper's ({@link org.apache.zookeeper.KeeperException.Code#intValue()}).
 */
public interface MultiOpSession {
    /**
     * The id of the session the next multi-op travels on; {@code 0} when there is no client.
     *
     * @throws RuntimeException when the client cannot be reached at all (the writer answers UNAVAILABLE)
     */
    long sessionId();

    /**
     * Sends the writes as one all-or-nothing multi-op (paths relative to the cluster namespace). The
     * answer comes once, on any thread; a multi-op that could not be sent may throw instead.
     */
    void multi(List<ZkWrite> writes, Answer answer);

    /** The answer to one multi-op. */
    @FunctionalInterface
    interface Answer {
        /**
         * @param rc the multi-op's code
         * @param results one per write, or {@code null} when the request got no per-operation answer
         *     (connection loss, session expiry)
         */
        void done(int rc, List<OpOutcome> results);
    }

    /** One operation's outcome: its code ({@code 0} for OK) and, for a create or setData, the new stat. */
    record OpOutcome(int code, NodeStat stat) {}
}
