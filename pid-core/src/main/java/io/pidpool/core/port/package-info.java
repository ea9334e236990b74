/**
 * Ports: the interfaces through which the core reaches ZooKeeper, Redis, the database and time.
 * Signatures use core types only; adapters live in the thin modules and translate their
 * exceptions into {@link io.pidpool.core.error.PidPoolException}.
 */
package io.pidpool.core.port;
