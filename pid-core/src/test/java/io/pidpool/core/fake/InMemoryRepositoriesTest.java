package io.pidpool.core.fake;

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

/** Every repository contract against the in-memory fakes. */
class InMemoryRepositoriesTest {
    private static Repositories fresh(Clock clock) {
        return new InMemoryDatabase(clock).repositories();
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
