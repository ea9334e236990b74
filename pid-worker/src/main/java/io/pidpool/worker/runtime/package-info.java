/**
 * The worker runtime: {@link io.pidpool.worker.runtime.WorkerPool} (the embeddable API: one ring
 * member with a pool of handler threads), its {@link io.pidpool.worker.runtime.WorkerConfig},
 * metrics ({@link io.pidpool.worker.runtime.WorkerMetrics} with a Micrometer binding) and the
 * standalone entry point {@link io.pidpool.worker.runtime.WorkerMain}; {@link
 * io.pidpool.worker.runtime.StopSignals} makes SIGTERM a clean stop with exit code 0 for both mains.
 */
package io.pidpool.worker.runtime;
