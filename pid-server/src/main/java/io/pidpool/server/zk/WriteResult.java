package io.pidpool.server.zk;

/**
 * What one {@link ZkWrite} of a committed multi-op produced: the node's new stat for a create or a
 * setData (creates use create2, so they have one too), {@code null} for a delete or a check.
 */
public record WriteResult(ZkWrite write, NodeStat stat) {}
