package io.pidpool.server.jdbc;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Duration;

/**
 * How to reach the database.
 *
 * @param user may be null when the URL carries it
 * @param password may be null; never printed
 * @param maxPoolSize connections in the pool
 * @param connectionTimeout how long a caller waits for a connection before UNAVAILABLE
 */
public record JdbcSettings(String url, String user, String password, int maxPoolSize, Duration connectionTimeout) {
    public static final int DEFAULT_POOL_SIZE = 10;
    /**
     * 2 s: a caller that finds the pool empty waits no longer, so an outage the health probe has not
     * yet seen still answers 503 within 2 s (docs/outages.md).
     */
    public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(2);

    public JdbcSettings {
        requireNonNull(url, "database.url");
        Dialect.fromUrl(url);
        requireArgument(
                maxPoolSize >= 1 && maxPoolSize <= 500,
                "database.maxPoolSize",
                "maxPoolSize must be within 1..500, was %d",
                maxPoolSize);
        requireNonNull(connectionTimeout, "database.connectionTimeout");
        requireArgument(
                connectionTimeout.toMillis() >= 250,
                "database.connectionTimeout",
                "connectionTimeout must be at least 250ms, was %s",
                connectionTimeout);
    }

    public static JdbcSettings of(String url, String user, String password) {
        return new JdbcSettings(url, user, password, DEFAULT_POOL_SIZE, DEFAULT_CONNECTION_TIMEOUT);
    }

    public JdbcSettings withPool(int size, Duration timeout) {
        return new JdbcSettings(url, user, password, size, timeout);
    }

    public Dialect dialect() {
        return Dialect.fromUrl(url);
    }

    /** The URL with any password parameter hidden, for logs and messages. */
    public String redactedUrl() {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1***");
    }

    @Override
    public String toString() {
        return "JdbcSettings[url=" + redactedUrl() + ", user=" + user + ", password="
                + (password == null ? "none" : "***") + ", maxPoolSize=" + maxPoolSize + ", connectionTimeout="
                + connectionTimeout + "]";
    }
}
