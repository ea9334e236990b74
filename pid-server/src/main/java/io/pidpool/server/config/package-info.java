/**
 * {@code server.yml}: the records it binds to ({@link io.pidpool.server.config.ServerConfig} and its
 * parts), and {@link io.pidpool.server.config.ConfigLoader}, which reads the file, applies the
 * {@code PIDPOOL_*} environment overrides ({@link io.pidpool.server.config.EnvironmentKeys}) and
 * validates the result with errors that name the key.
 */
package io.pidpool.server.config;
