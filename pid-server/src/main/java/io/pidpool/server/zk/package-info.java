/**
 * ZooKeeper adapters of the server: the fenced, batched writer every leader write goes through, the
 * epoch fence, a snapshot scanner built on read multi-ops, and {@link io.pidpool.server.zk.TreeWatcher}, the
 * port of the SDK's {@code TreeFollower} recipe that turns the watched tree into {@link
 * io.pidpool.server.zk.NodeEvent}s. Nothing here decides anything: the leader
 * package does, on its one serial executor.
 */
package io.pidpool.server.zk;
