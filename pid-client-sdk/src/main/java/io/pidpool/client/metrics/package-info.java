/**
 * The SDK's meters in the application's Micrometer registry ({@link
 * io.pidpool.client.metrics.PidClientMetrics}, bound by {@code PidClient.builder().meterRegistry(..)}).
 * Micrometer is an optional dependency: only this package uses it.
 */
package io.pidpool.client.metrics;
