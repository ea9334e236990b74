package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationType;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import java.util.List;
import java.util.function.Function;

/**
 * An {@link Operation} as the {@link OperationLog} stores it: the same six kinds with the same
 * rules, except that ADD and UPDATE carry {@link SealedPidSpec}s instead of plain passwords.
 */
public sealed interface SealedOperation {
    OperationType type();

    /** The PID ids this operation touches (empty for {@link SetServers}). */
    List<String> pidIds();

    record Add(ModuleKey module, List<SealedPidSpec> pids) implements SealedOperation {
        public Add {
            requireNonNull(module, "module");
            pids = List.copyOf(requireNonNull(pids, "pids"));
            pids.forEach(p -> requireNonNull(p.secret(), "pids.secret"));
            Operation.requireIdList(pids.stream().map(SealedPidSpec::id).toList());
        }

        @Override
        public OperationType type() {
            return OperationType.ADD;
        }

        @Override
        public List<String> pidIds() {
            return pids.stream().map(SealedPidSpec::id).toList();
        }
    }

    record Update(List<SealedPidSpec> pids) implements SealedOperation {
        public Update {
            pids = List.copyOf(requireNonNull(pids, "pids"));
            Operation.requireIdList(pids.stream().map(SealedPidSpec::id).toList());
        }

        @Override
        public OperationType type() {
            return OperationType.UPDATE;
        }

        @Override
        public List<String> pidIds() {
            return pids.stream().map(SealedPidSpec::id).toList();
        }
    }

    record Delete(List<String> pidIds) implements SealedOperation {
        public Delete {
            pidIds = new Operation.Delete(pidIds).pidIds(); // same rules
        }

        @Override
        public OperationType type() {
            return OperationType.DELETE;
        }
    }

    record Migrate(List<String> pidIds, ModuleKey to) implements SealedOperation {
        public Migrate {
            pidIds = new Operation.Migrate(pidIds, to).pidIds(); // same rules
        }

        @Override
        public OperationType type() {
            return OperationType.MIGRATE;
        }
    }

    record ResetQuota(List<String> pidIds) implements SealedOperation {
        public ResetQuota {
            pidIds = new Operation.ResetQuota(pidIds).pidIds(); // same rules
        }

        @Override
        public OperationType type() {
            return OperationType.RESET_QUOTA;
        }
    }

    record SetServers(ModuleKey module, int servers, long monthlyDemand, java.time.Duration rebalanceDelay)
            implements SealedOperation {
        public SetServers {
            new Operation.SetServers(module, servers, monthlyDemand, rebalanceDelay); // same rules
        }

        /** With the server's default rebalance delay. */
        public SetServers(ModuleKey module, int servers, long monthlyDemand) {
            this(module, servers, monthlyDemand, null);
        }

        @Override
        public OperationType type() {
            return OperationType.SET_SERVERS;
        }

        @Override
        public List<String> pidIds() {
            return List.of();
        }
    }

    /** Seals the passwords of an ADD or UPDATE with {@code sealer}; other kinds carry none. */
    static SealedOperation seal(Operation operation, Function<String, SealedSecret> sealer) {
        requireNonNull(operation, "operation");
        if (operation instanceof Operation.Add add) {
            return new Add(add.module(), seal(add.pids(), sealer));
        } else if (operation instanceof Operation.Update update) {
            return new Update(seal(update.pids(), sealer));
        } else if (operation instanceof Operation.Delete delete) {
            return new Delete(delete.pidIds());
        } else if (operation instanceof Operation.Migrate migrate) {
            return new Migrate(migrate.pidIds(), migrate.to());
        } else if (operation instanceof Operation.ResetQuota reset) {
            return new ResetQuota(reset.pidIds());
        } else if (operation instanceof Operation.SetServers set) {
            return new SetServers(set.module(), set.servers(), set.monthlyDemand(), set.rebalanceDelay());
        }
        throw new IllegalArgumentException("unknown operation kind " + operation.type());
    }

    private static List<SealedPidSpec> seal(List<PidSpec> specs, Function<String, SealedSecret> sealer) {
        return specs.stream().map(spec -> SealedPidSpec.seal(spec, sealer)).toList();
    }
}
