/**
 * The coordination part of a server: leader election, the leader's views of ZooKeeper and the
 * database, level-triggered reconciliation (decide → records → replay, Kafka's coordinator shape) on
 * one serial executor, exactly-once application of operator batches, and the read model the HTTP
 * layer shows. Entry point: {@link io.pidpool.server.leader.ClusterMember}. Design: {@code docs/leader.md}.
 */
package io.pidpool.server.leader;
