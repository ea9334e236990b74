/**
 * The database adapters of the repository ports: Jdbi 3 over a HikariCP pool, schema by Flyway
 * ({@code db/pidpool/V*.sql}, history table {@code pidpool_schema_history}). {@link
 * io.pidpool.server.jdbc.Database#open} is the entry point; it returns the ports as
 * {@link io.pidpool.core.port.Repositories}. Database errors become
 * {@link io.pidpool.core.error.PidPoolException}s in one place ({@code SqlErrors}). Works unchanged
 * on H2 2.x, PostgreSQL 15 and MariaDB 10.11 (see {@code docs/database.md}).
 */
package io.pidpool.server.jdbc;
