/**
 * End-to-end scenarios: the real leader (pid-server {@code PidPoolNode}s over H2) and the real SDK
 * ({@code PidClient}, in-process here), judged by the recording platform: allocation at scale,
 * minimal movement on join, leader failover in the middle of a batch and of a handoff.
 */
package io.pidpool.it.e2e;
