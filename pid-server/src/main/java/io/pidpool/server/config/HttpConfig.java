package io.pidpool.server.config;

/**
 * The operator HTTP API and console.
 *
 * @param host the address to bind ({@code 0.0.0.0} for all interfaces)
 * @param port the port to bind; {@code 0} picks a free one (the server reports the real one)
 * @param maxRequestBytes the largest request body accepted; larger ones get 413
 * @param metricsRequireToken whether {@code GET /metrics} needs a bearer token (any role); open if
 *     false
 */
public record HttpConfig(String host, int port, long maxRequestBytes, boolean metricsRequireToken) {
    public static final long DEFAULT_MAX_REQUEST_BYTES = 1L << 20;

    /** With {@code /metrics} open. */
    public HttpConfig(String host, int port, long maxRequestBytes) {
        this(host, port, maxRequestBytes, false);
    }
}
