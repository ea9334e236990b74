package io.pidpool.server.config;

/**
 * The operator HTTP API and console.
 *
 * @param host the address to bind ({@code 0.0.0.0} for all interfaces)
 * @param port the port to bind; {@code 0} picks a free one (the server reports the real one)
 * @param maxRequestBytes the largest request body accepted; larger ones get 413
 */
public record HttpConfig(String host, int port, long maxRequestBytes) {
    public static final long DEFAULT_MAX_REQUEST_BYTES = 1L << 20;
}
