package io.pidpool.server.zk;

import io.pidpool.core.model.Epoch;

/**
 * Proof of one leadership term: the epoch this leader wrote to {@code /epoch}, the node version that
 * write produced, and the ZooKeeper session that holds the leadership. Every fenced write checks
 * {@code /epoch} against {@code epochVersion} and refuses to run on another session.
 */
public record FenceToken(Epoch epoch, int epochVersion, long sessionId) {}
