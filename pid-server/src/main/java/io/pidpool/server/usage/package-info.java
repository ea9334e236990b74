/**
 * Usage ledger sync : moves the quota scripts' usage events from the per-shard Redis
 * streams into the database {@link io.pidpool.core.port.UsageLedger} exactly once, finds and fills
 * gaps by per-client sequence numbers, runs as pid-worker tasks (one per shard), and rebuilds Redis
 * usage counters from the database after Redis lost them. See docs/usage-sync.md.
 */
package io.pidpool.server.usage;
