/**
 * The cluster single-flight across JVMs: {@link io.pidpool.it.singleflight.SingleFlightMain} is a
 * participant in a JVM of its own, driven by {@link io.pidpool.it.singleflight.FlightProcess}; used by
 * the crash scenario and by {@code io.pidpool.it.bench.SingleFlightBenchmark}.
 */
package io.pidpool.it.singleflight;
