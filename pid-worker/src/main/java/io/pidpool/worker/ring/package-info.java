/**
 * Ring membership of pid-worker: each worker registers an EPHEMERAL node {@code
 * /workers/<group>/<memberId>} (under {@code /pidpool/<cluster>}) that advertises the task types it
 * runs, watches its group and keeps a {@link io.pidpool.worker.ring.GroupRing} snapshot of the live
 * members: one {@link io.pidpool.core.ring.ConsistentHashRing} per task type, made of the members
 * that run it ({@link io.pidpool.worker.ring.CuratorRingMembership}); {@link
 * io.pidpool.worker.ring.StaticRingMembership} is the ZooKeeper-free stand-in for tests.
 */
package io.pidpool.worker.ring;
