/**
 * The wiring that builds and runs a whole server: {@link io.pidpool.server.runtime.PidServer} (from a
 * {@link io.pidpool.server.config.ServerConfig}: Curator, database, Redisson, health, HTTP) and
 * {@link io.pidpool.server.runtime.StandaloneServer} (embedded ZooKeeper, Redis and H2 plus a
 * PidServer). Both start in order and stop in reverse order, also when stopped half-way. Process
 * guards: the HTTP port is held from the first step ({@code PortReservation}), a standalone data
 * directory is locked ({@code DataDirLock}); {@code ServerMetrics} binds the JVM, process, HTTP,
 * ZooKeeper, pool and probe meters to the {@code /metrics} registry.
 */
package io.pidpool.server.runtime;
