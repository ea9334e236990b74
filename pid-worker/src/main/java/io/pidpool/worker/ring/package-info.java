/**
 * Ring membership of pid-worker: each worker registers an EPHEMERAL node {@code
 * /workers/<group>/<memberId>} (under {@code /pidpool/<cluster>}), watches its group and keeps a
 * {@link io.pidpool.core.ring.ConsistentHashRing} snapshot of the live members
 * ({@link io.pidpool.worker.ring.CuratorRingMembership}); {@link
 * io.pidpool.worker.ring.StaticRingMembership} is the ZooKeeper-free stand-in for tests.
 */
package io.pidpool.worker.ring;
