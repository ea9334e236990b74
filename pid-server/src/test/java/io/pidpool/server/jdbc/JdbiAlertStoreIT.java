package io.pidpool.server.jdbc;

import io.pidpool.core.contract.AlertStoreContract;
import io.pidpool.core.port.AlertStore;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link AlertStoreContract} against {@link JdbiAlertStore}: on H2 always, on PostgreSQL and MariaDB
 * when {@code PIDPOOL_TEST_POSTGRES_URL} / {@code PIDPOOL_TEST_MARIADB_URL} are set (V3 migrated
 * with the rest of the schema by {@link Database#open}).
 */
@ExtendWith(SharedTestDatabases.class)
class JdbiAlertStoreIT {
    private static AlertStore fresh(Dialect dialect) {
        TestDatabase db = SharedTestDatabases.get(dialect);
        db.execute(List.of("DELETE FROM alert"));
        return db.database().alerts();
    }

    @Nested
    class H2 extends AlertStoreContract {
        @Override
        protected AlertStore newStore() {
            return fresh(Dialect.H2);
        }
    }

    @Nested
    @EnabledIfEnvironmentVariable(named = TestDatabase.POSTGRES_ENV, matches = ".+")
    class PostgreSQL extends AlertStoreContract {
        @Override
        protected AlertStore newStore() {
            return fresh(Dialect.POSTGRESQL);
        }
    }

    @Nested
    @EnabledIfEnvironmentVariable(named = TestDatabase.MARIADB_ENV, matches = ".+")
    class MariaDB extends AlertStoreContract {
        @Override
        protected AlertStore newStore() {
            return fresh(Dialect.MARIADB);
        }
    }
}
