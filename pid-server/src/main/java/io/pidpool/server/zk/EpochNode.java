package io.pidpool.server.zk;

import java.util.concurrent.CompletionStage;

/**
 * The {@code /epoch} node as a term start sees it: read it, bump it with a versioned write, or
 * create it. Asynchronous, so that the one bump ({@link EpochFence#bump(EpochNode, String,
 * io.pidpool.core.model.Epoch)}) runs both over Curator ({@link CuratorEpochNode}, blocking: each stage
 * is complete when returned) and over the simulated ZooKeeper of the protocol simulation. Errors
 * other than the ones named complete the stage exceptionally with a {@code PidPoolException}.
 */
public interface EpochNode {
    /** The node's data and version, as read. */
    record Versioned(byte[] data, int version) {}

    /** The session the writes are made with (the fence token is bound to it). */
    long sessionId();

    /** The node's data and version, or {@code null} if it does not exist. */
    CompletionStage<Versioned> read(String path);

    /** Sets the data if the version still matches: the new version, or {@code -1} if it changed. */
    CompletionStage<Integer> write(String path, byte[] data, int expectedVersion);

    /** Creates the node PERSISTENT (with missing parents): {@code true}, or {@code false} if it exists. */
    CompletionStage<Boolean> create(String path, byte[] data);
}
