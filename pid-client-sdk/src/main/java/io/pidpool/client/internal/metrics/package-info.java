/**
 * The SDK's meters in the application's Micrometer registry ({@link
 * io.pidpool.client.internal.metrics.PidClientMetrics}, bound by {@code PidClient.builder().meterRegistry(..)}).
 * Micrometer is an optional dependency: only this package uses it.
 *
 * <p><b>Internal.</b> Not for applications: no compatibility is promised between releases. The server
 * and pid-worker share this code with the SDK (as a broker shares its clients' protocol code); an
 * application uses {@code io.pidpool.client} only.
 */
package io.pidpool.client.internal.metrics;
