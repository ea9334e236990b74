package io.pidpool.server.jdbc;

import io.pidpool.core.contract.AssignmentRepositoryContract;
import io.pidpool.core.contract.AuditLogContract;
import io.pidpool.core.contract.LeaderFenceContract;
import io.pidpool.core.contract.ModuleRepositoryContract;
import io.pidpool.core.contract.OperationLogContract;
import io.pidpool.core.contract.PidRepositoryContract;
import io.pidpool.core.contract.SlotRepositoryContract;
import io.pidpool.core.contract.TransactorContract;
import io.pidpool.core.contract.UsageLedgerContract;
import io.pidpool.core.port.Repositories;
import java.time.Clock;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every repository contract against the Jdbi adapters: on H2 always, on PostgreSQL and MariaDB when
 * {@code PIDPOOL_TEST_POSTGRES_URL} / {@code PIDPOOL_TEST_MARIADB_URL} are set. Each database is a
 * random schema ({@link SharedTestDatabases}), emptied before every test and dropped after the run.
 * The contract classes are spelled out per database so reports name the database
 * ({@code JdbiRepositoriesIT$MariaDB$Usage}).
 */
@ExtendWith(SharedTestDatabases.class)
class JdbiRepositoriesIT {
    @Nested
    class H2 {
        private Repositories fresh(Clock clock) {
            return SharedTestDatabases.get(Dialect.H2).fresh(clock);
        }

        @Nested
        class Modules extends ModuleRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Pids extends PidRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Assignments extends AssignmentRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Slots extends SlotRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Operations extends OperationLogContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Audit extends AuditLogContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Usage extends UsageLedgerContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Transactions extends TransactorContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Fence extends LeaderFenceContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }
    }

    @Nested
    @EnabledIfEnvironmentVariable(named = TestDatabase.POSTGRES_ENV, matches = ".+")
    class PostgreSQL {
        private Repositories fresh(Clock clock) {
            return SharedTestDatabases.get(Dialect.POSTGRESQL).fresh(clock);
        }

        @Nested
        class Modules extends ModuleRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Pids extends PidRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Assignments extends AssignmentRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Slots extends SlotRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Operations extends OperationLogContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Audit extends AuditLogContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Usage extends UsageLedgerContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Transactions extends TransactorContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Fence extends LeaderFenceContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }
    }

    @Nested
    @EnabledIfEnvironmentVariable(named = TestDatabase.MARIADB_ENV, matches = ".+")
    class MariaDB {
        private Repositories fresh(Clock clock) {
            return SharedTestDatabases.get(Dialect.MARIADB).fresh(clock);
        }

        @Nested
        class Modules extends ModuleRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Pids extends PidRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Assignments extends AssignmentRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Slots extends SlotRepositoryContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Operations extends OperationLogContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Audit extends AuditLogContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Usage extends UsageLedgerContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Transactions extends TransactorContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }

        @Nested
        class Fence extends LeaderFenceContract {
            @Override
            protected Repositories newRepositories(Clock clock) {
                return fresh(clock);
            }
        }
    }
}
