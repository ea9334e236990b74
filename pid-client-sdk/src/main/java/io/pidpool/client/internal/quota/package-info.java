/**
 * Quota in Redis, shared by the SDK and the server: {@link io.pidpool.client.internal.quota.RedissonQuotaLedger}
 * (the {@link io.pidpool.core.port.QuotaLedger} port as one Lua script per operation, keys laid out
 * by {@link io.pidpool.client.internal.quota.QuotaKeys}), the usage event log the database ledger is synced
 * from ({@link io.pidpool.client.internal.quota.UsageEventLog}, {@link io.pidpool.client.internal.quota.ClientSequenceTracker}),
 * the client's near cache ({@link io.pidpool.client.internal.quota.QuotaNearCache}) and the permit issuer behind
 * {@code PidClient.tryAcquire} / {@code refund} ({@link io.pidpool.client.internal.quota.PermitIssuer}). See
 * {@code docs/quota.md}.
 *
 * <p><b>Internal.</b> Not for applications: no compatibility is promised between releases. The server
 * and pid-worker share this code with the SDK (as a broker shares its clients' protocol code); an
 * application uses {@code io.pidpool.client} only.
 */
package io.pidpool.client.internal.quota;
