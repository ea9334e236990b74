package io.pidpool.server.jdbc;

import io.pidpool.core.contract.CooldownRepositoryContract;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.core.port.Repositories;
import java.time.Clock;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link CooldownRepositoryContract} against H2, and PostgreSQL / MariaDB when configured. */
@ExtendWith(SharedTestDatabases.class)
class JdbiCooldownRepositoryIT {
    @Nested
    class H2 extends CooldownRepositoryContract {
        @Override
        protected Repositories newRepositories(Clock clock) {
            return SharedTestDatabases.get(Dialect.H2).fresh(clock);
        }

        @Override
        protected CooldownRepository newCooldowns(Repositories repos) {
            return SharedTestDatabases.get(Dialect.H2).database().cooldowns();
        }
    }

    @Nested
    @EnabledIfEnvironmentVariable(named = TestDatabase.POSTGRES_ENV, matches = ".+")
    class PostgreSQL extends CooldownRepositoryContract {
        @Override
        protected Repositories newRepositories(Clock clock) {
            return SharedTestDatabases.get(Dialect.POSTGRESQL).fresh(clock);
        }

        @Override
        protected CooldownRepository newCooldowns(Repositories repos) {
            return SharedTestDatabases.get(Dialect.POSTGRESQL).database().cooldowns();
        }
    }

    @Nested
    @EnabledIfEnvironmentVariable(named = TestDatabase.MARIADB_ENV, matches = ".+")
    class MariaDB extends CooldownRepositoryContract {
        @Override
        protected Repositories newRepositories(Clock clock) {
            return SharedTestDatabases.get(Dialect.MARIADB).fresh(clock);
        }

        @Override
        protected CooldownRepository newCooldowns(Repositories repos) {
            return SharedTestDatabases.get(Dialect.MARIADB).database().cooldowns();
        }
    }
}
