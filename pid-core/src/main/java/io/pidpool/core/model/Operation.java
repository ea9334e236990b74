package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.util.HashSet;
import java.util.List;

/** One operator request inside a batch. Each variant validates itself on construction. */
public sealed interface Operation {
    /** The most PIDs one operation may name; larger requests are split by the caller. */
    int MAX_PIDS = 10_000;

    OperationType type();

    /** The PID ids this operation touches (empty for {@link SetServers}). */
    List<String> pidIds();

    record Add(ModuleKey module, List<PidSpec> pids) implements Operation {
        public Add {
            requireNonNull(module, "module");
            pids = List.copyOf(requireNonNull(pids, "pids"));
            requireIdList(pids.stream().map(PidSpec::id).toList());
            for (PidSpec p : pids) {
                requireArgument(p.secret() != null, "pids.secret", "secret of %s is required to add it", p.id());
            }
        }

        @Override
        public OperationType type() {
            return OperationType.ADD;
        }

        @Override
        public List<String> pidIds() {
            return pids.stream().map(PidSpec::id).toList();
        }
    }

    /**
     * Replaces quota, allowance, attributes and (when given) the secret of existing PIDs; a spec
     * without a secret keeps the stored one. The module stays.
     */
    record Update(List<PidSpec> pids) implements Operation {
        public Update {
            pids = List.copyOf(requireNonNull(pids, "pids"));
            requireIdList(pids.stream().map(PidSpec::id).toList());
        }

        @Override
        public OperationType type() {
            return OperationType.UPDATE;
        }

        @Override
        public List<String> pidIds() {
            return pids.stream().map(PidSpec::id).toList();
        }
    }

    record Delete(List<String> pidIds) implements Operation {
        public Delete {
            pidIds = validIds(pidIds);
        }

        @Override
        public OperationType type() {
            return OperationType.DELETE;
        }
    }

    record Migrate(List<String> pidIds, ModuleKey to) implements Operation {
        public Migrate {
            pidIds = validIds(pidIds);
            requireNonNull(to, "to");
        }

        @Override
        public OperationType type() {
            return OperationType.MIGRATE;
        }
    }

    record ResetQuota(List<String> pidIds) implements Operation {
        public ResetQuota {
            pidIds = validIds(pidIds);
        }

        @Override
        public OperationType type() {
            return OperationType.RESET_QUOTA;
        }
    }

    /**
     * Sets a module's server count, demand and rebalance delay ({@code null}: the server's default),
     * creating the module if needed.
     */
    record SetServers(ModuleKey module, int servers, long monthlyDemand, java.time.Duration rebalanceDelay)
            implements Operation {
        public SetServers {
            requireNonNull(module, "module");
            ModuleConfig.of(module, servers); // same bounds as the config itself
            requireArgument(monthlyDemand >= 0, "monthlyDemand", "monthlyDemand must be >= 0, was %d", monthlyDemand);
            ModuleConfig.requireRebalanceDelay(rebalanceDelay);
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

    private static List<String> validIds(List<String> ids) {
        List<String> copy = List.copyOf(requireNonNull(ids, "pids"));
        copy.forEach(id -> Names.requirePidId(id, "pids"));
        requireIdList(copy);
        return copy;
    }

    /**
     * The rules every kind applies to the PID ids it names: 1..{@link #MAX_PIDS} of them, none twice.
     * Shared with the stored form of operations ({@code SealedOperation}).
     */
    static void requireIdList(List<String> ids) {
        requireArgument(
                !ids.isEmpty() && ids.size() <= MAX_PIDS,
                "pids",
                "an operation names 1..%d PIDs, got %d",
                MAX_PIDS,
                ids.size());
        var seen = new HashSet<String>();
        for (String id : ids) {
            requireArgument(seen.add(id), "pids", "PID %s appears twice in one operation", id);
        }
    }
}
