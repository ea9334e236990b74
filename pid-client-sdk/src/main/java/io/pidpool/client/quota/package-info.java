/**
 * Quota in Redis, shared by the SDK and the server: {@link io.pidpool.client.quota.RedissonQuotaLedger}
 * (the {@link io.pidpool.core.port.QuotaLedger} port as one Lua script per operation, keys laid out
 * by {@link io.pidpool.client.quota.QuotaKeys}), the usage event log the database ledger is synced
 * from ({@link io.pidpool.client.quota.UsageEventLog}, {@link io.pidpool.client.quota.ClientSequenceTracker}),
 * the client's near cache ({@link io.pidpool.client.quota.QuotaNearCache}) and the permit issuer behind
 * {@code PidClient.tryAcquire} / {@code refund} ({@link io.pidpool.client.quota.PermitIssuer}). See
 * {@code docs/quota.md}.
 */
package io.pidpool.client.quota;
