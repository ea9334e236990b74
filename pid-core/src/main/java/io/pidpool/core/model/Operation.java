package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.util.HashSet;
import java.util.List;
import java.util.function.Function;

/**
 * One operator request inside a batch. Each variant validates itself on construction; these are the
 * only checks of an operation's shape, whatever form its secrets take.
 *
 * @param <S> the form of the account passwords in ADD and UPDATE: {@code String} (plain, as an
 *     operator submits it; never logged, see {@link PidSpec#toString()}) or {@link SealedSecret} (as
 *     the operation log stores it). The other kinds carry no secret and take either form.
 */
public sealed interface Operation<S> {
    /** The most PIDs one operation may name; larger requests are split by the caller. */
    int MAX_PIDS = 10_000;

    OperationType type();

    /** The PID ids this operation touches (empty for {@link SetServers}). */
    List<String> pidIds();

    /** The accounts an ADD or UPDATE describes, in order; empty for the other kinds. */
    default List<PidSpec<S>> specs() {
        return List.of();
    }

    /** The module this operation names: ADD's, MIGRATE's target, SET_SERVERS'; {@code null} for the others. */
    default ModuleKey moduleNamed() {
        return null;
    }

    /** This operation with every secret passed through {@code convert} (e.g. sealed); all else stays. */
    <T> Operation<T> withSecrets(Function<? super S, ? extends T> convert);

    record Add<S>(ModuleKey module, List<PidSpec<S>> pids) implements Operation<S> {
        public Add {
            requireNonNull(module, "module");
            pids = List.copyOf(requireNonNull(pids, "pids"));
            requireIdList(pids.stream().map(PidSpec::id).toList());
            for (int i = 0; i < pids.size(); i++) {
                PidSpec<S> p = pids.get(i);
                requireArgument(
                        p.secret() != null, "pids[" + i + "].secret", "secret of %s is required to add it", p.id());
            }
        }

        @Override
        public OperationType type() {
            return OperationType.ADD;
        }

        @Override
        public ModuleKey moduleNamed() {
            return module;
        }

        @Override
        public List<String> pidIds() {
            return pids.stream().map(PidSpec::id).toList();
        }

        @Override
        public List<PidSpec<S>> specs() {
            return pids;
        }

        @Override
        public <T> Add<T> withSecrets(Function<? super S, ? extends T> convert) {
            return new Add<>(module, PidSpec.withSecrets(pids, convert));
        }
    }

    /**
     * Replaces quota, allowance, attributes and (when given) the secret of existing PIDs; a spec
     * without a secret keeps the stored one. The module stays.
     */
    record Update<S>(List<PidSpec<S>> pids) implements Operation<S> {
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

        @Override
        public List<PidSpec<S>> specs() {
            return pids;
        }

        @Override
        public <T> Update<T> withSecrets(Function<? super S, ? extends T> convert) {
            return new Update<>(PidSpec.withSecrets(pids, convert));
        }
    }

    record Delete<S>(List<String> pidIds) implements Operation<S> {
        public Delete {
            pidIds = validIds(pidIds);
        }

        @Override
        public OperationType type() {
            return OperationType.DELETE;
        }

        @Override
        public <T> Delete<T> withSecrets(Function<? super S, ? extends T> convert) {
            return new Delete<>(pidIds);
        }
    }

    record Migrate<S>(List<String> pidIds, ModuleKey to) implements Operation<S> {
        public Migrate {
            pidIds = validIds(pidIds);
            requireNonNull(to, "to");
        }

        @Override
        public OperationType type() {
            return OperationType.MIGRATE;
        }

        @Override
        public ModuleKey moduleNamed() {
            return to;
        }

        @Override
        public <T> Migrate<T> withSecrets(Function<? super S, ? extends T> convert) {
            return new Migrate<>(pidIds, to);
        }
    }

    record ResetQuota<S>(List<String> pidIds) implements Operation<S> {
        public ResetQuota {
            pidIds = validIds(pidIds);
        }

        @Override
        public OperationType type() {
            return OperationType.RESET_QUOTA;
        }

        @Override
        public <T> ResetQuota<T> withSecrets(Function<? super S, ? extends T> convert) {
            return new ResetQuota<>(pidIds);
        }
    }

    /**
     * Sets a module's server count, demand and rebalance delay ({@code null}: the server's default),
     * creating the module if needed.
     */
    record SetServers<S>(ModuleKey module, int servers, long monthlyDemand, java.time.Duration rebalanceDelay)
            implements Operation<S> {
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
        public ModuleKey moduleNamed() {
            return module;
        }

        @Override
        public List<String> pidIds() {
            return List.of();
        }

        @Override
        public <T> SetServers<T> withSecrets(Function<? super S, ? extends T> convert) {
            return new SetServers<>(module, servers, monthlyDemand, rebalanceDelay);
        }
    }

    private static List<String> validIds(List<String> ids) {
        List<String> copy = List.copyOf(requireNonNull(ids, "pids"));
        copy.forEach(id -> Names.requirePidId(id, "pids"));
        requireIdList(copy);
        return copy;
    }

    /** The rules every kind applies to the PID ids it names: 1..{@link #MAX_PIDS} of them, none twice. */
    private static void requireIdList(List<String> ids) {
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
