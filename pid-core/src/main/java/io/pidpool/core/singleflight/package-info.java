/**
 * Cluster single-flight: for one key, one participant of the cluster runs the work and every other
 * participant's callers receive its result. The state machine ({@link
 * io.pidpool.core.singleflight.FlightState}, driven by {@link
 * io.pidpool.core.singleflight.SingleFlightEngine}) is pure; it reaches ZooKeeper only through the
 * ports {@link io.pidpool.core.singleflight.FlightLocks} and {@link
 * io.pidpool.core.singleflight.FlightResults}. The rules are written down in {@code docs/sdk.md}.
 */
package io.pidpool.core.singleflight;
