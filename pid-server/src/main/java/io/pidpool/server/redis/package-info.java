/**
 * The server's side of the Redis quota ledger ({@code io.pidpool.client.internal.quota}): {@link
 * io.pidpool.server.redis.RedisQuotaProvisioner}, through which the leader sets limits, resets months
 * and reconciles. Design: {@code docs/quota.md} ("Leader provisioning").
 */
package io.pidpool.server.redis;
