/**
 * Client JVMs for fault scenarios: {@link io.pidpool.it.client.ClientMain} runs a real {@code
 * PidClient} in its own process, {@link io.pidpool.it.client.ClientProcess} starts, observes, freezes
 * and kills it from the test.
 */
package io.pidpool.it.client;
