package io.pidpool.server.config;

/**
 * The pid-worker tasks that run inside the server process.
 *
 * @param enabled {@code false} when separate pid-worker processes do that work
 */
public record EmbeddedWorkerConfig(boolean enabled) {}
