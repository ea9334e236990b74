/**
 * The consistent-hash ring that splits a 32-bit slot space between members (the
 * leaderless workers): {@link io.pidpool.core.ring.ConsistentHashRing} with virtual nodes, range
 * ownership queries and ring diffs, over the local {@link io.pidpool.core.ring.Murmur3} hash.
 * Pure JDK, immutable values, safe to share between threads.
 */
package io.pidpool.core.ring;
