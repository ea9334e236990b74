package io.pidpool.server.config;

/**
 * The database (PostgreSQL, MySQL/MariaDB, or H2 for {@code standalone}).
 *
 * @param url a JDBC url
 * @param user may be empty when the url carries the credentials
 * @param password never logged
 * @param maxPoolSize the HikariCP pool size
 */
public record DatabaseConfig(String url, String user, String password, int maxPoolSize) {
    @Override
    public String toString() {
        return "DatabaseConfig[url=" + url + ", user=" + user + ", password="
                + (password == null || password.isEmpty() ? "(none)" : "***") + ", maxPoolSize=" + maxPoolSize + "]";
    }
}
