package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.QuotaResetLog;
import io.pidpool.core.port.Repositories;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Applies one operator batch to the database, exactly once.
 *
 * <p>Everything happens in one transaction: {@code markDealing} first (it locks the batch row, and
 * refuses a batch that is already final or was last moved by a newer epoch), then each operation in
 * order, then {@code finish} with one result per operation, and last the leader epoch check ({@link
 * io.pidpool.core.port.LeaderFence#check}: a deposed leader commits nothing, and a successor's term start
 * waits at most for a batch that passed it and is committing). So the batch's effects and its final
 * status commit together or not at all: a leader that dies mid-batch leaves nothing behind, and its
 * successor applies the batch from scratch; two leaders racing on one batch are serialised by the row
 * lock, and the second one finds it final and skips it.
 *
 * <p>Each operation is all or nothing and fails alone (its result says why); the batch is DEALED if any
 * operation succeeded, FAILED if none did. The ZooKeeper side follows from the database by
 * reconciliation: this class only returns the {@link DbChange}s to replay into the leader's view.
 *
 * <p>Concurrency: stateless; runs on the leader's serial executor.
 */
final class BatchApplier {
    /**
     * What applying a batch committed: the database changes, and the PIDs whose quota an operation
     * reset (the caller provisions both once the transaction committed).
     */
    record Applied(
            BatchRecord batch,
            List<DbChange> changes,
            List<String> quotaResets,
            List<QuotaResetLog.Reset> recordedResets) {}

    private final Repositories repos;
    private final Runnable insideTransaction;
    private final QuotaResetLog resetLog;
    private final Clock clock;

    /** @param insideTransaction test hook, run after the batch row is locked, before any effect */
    BatchApplier(Repositories repos, Runnable insideTransaction) {
        this(repos, insideTransaction, QuotaResetLog.none(), Clock.systemUTC());
    }

    /** @param resetLog where RESET_QUOTA is recorded, in the batch's transaction (durable resets) */
    BatchApplier(Repositories repos, Runnable insideTransaction, QuotaResetLog resetLog, Clock clock) {
        this.repos = repos;
        this.insideTransaction = insideTransaction;
        this.resetLog = resetLog;
        this.clock = clock;
    }

    /** Applies the batch; empty if it was already final (applied by an earlier leader). */
    Optional<Applied> apply(BatchId id, Epoch epoch) {
        return apply(epoch, () -> repos.operations().markDealing(id, epoch));
    }

    /**
     * {@link #apply(BatchId, Epoch)} of a batch the caller has read: it is not loaded again (a batch's
     * operations never change; its status and epoch are checked under the row lock).
     */
    Optional<Applied> apply(BatchRecord known, Epoch epoch) {
        return apply(epoch, () -> repos.operations().transition(known, BatchStatus.DEALING, List.of(), epoch));
    }

    private Optional<Applied> apply(Epoch epoch, Supplier<BatchRecord> markDealing) {
        try {
            return Optional.of(repos.transactor().inTransaction(() -> {
                BatchRecord batch = markDealing.get();
                BatchId id = batch.id();
                insideTransaction.run();
                List<DbChange> changes = new ArrayList<>();
                List<String> resets = new ArrayList<>();
                List<OperationResult> results = new ArrayList<>();
                for (int i = 0; i < batch.operations().size(); i++) {
                    results.add(applyOne(i, batch.operations().get(i), changes, resets));
                }
                boolean any = results.stream().anyMatch(OperationResult::ok);
                // the batch as markDealing left it, under its row lock: not loaded a third time
                BatchRecord done = repos.operations()
                        .transition(batch, any ? BatchStatus.DEALED : BatchStatus.FAILED, results, epoch);
                List<QuotaResetLog.Reset> recorded =
                        resets.isEmpty() ? List.of() : resetLog.record(resets, clock.instant());
                repos.fence().check(epoch); // last: held to the commit
                return new Applied(done, changes, List.copyOf(resets), recorded);
            }));
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.ILLEGAL_STATE) {
                return Optional.empty(); // final already: DEALING may not follow DEALED or FAILED
            }
            throw e;
        }
    }

    private OperationResult applyOne(
            int index, Operation<SealedSecret> op, List<DbChange> changes, List<String> resets) {
        List<DbChange> mine = new ArrayList<>();
        try {
            String message = apply(op, mine);
            changes.addAll(mine);
            if (op instanceof Operation.ResetQuota<SealedSecret> reset) {
                resets.addAll(reset.pidIds());
            }
            return new OperationResult(index, true, message);
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.FENCED || e.code() == ErrorCode.UNAVAILABLE) {
                throw e; // not about this operation: the whole batch must wait
            }
            return OperationResult.failed(index, e.getMessage());
        }
    }

    private String apply(Operation<SealedSecret> op, List<DbChange> changes) {
        if (op instanceof Operation.Add<SealedSecret> add) {
            if (repos.modules().find(add.module()).isEmpty()) {
                // the module is created first, so a PID that exists must fail the operation before
                Map<String, ModuleKey> existing = repos.pids().modulesOf(add.pidIds());
                if (!existing.isEmpty()) {
                    throw PidPoolException.conflict(
                            "pid.id", "PIDs already exist: %s", String.join(", ", new TreeSet<>(existing.keySet())));
                }
                ensureModule(add.module(), changes);
            }
            List<PidRecord> accounts = add.pids().stream()
                    .map(spec -> PidRecord.added(spec, add.module()))
                    .toList();
            repos.pids().insertAll(accounts); // CONFLICT, having written nothing, if a PID exists
            accounts.forEach(a -> changes.add(new DbChange.PidPut(a)));
            return "added " + accounts.size();
        } else if (op instanceof Operation.Update<SealedSecret> update) {
            Map<String, PidRecord> existing = requireAll(update.pidIds());
            List<PidRecord> accounts = new ArrayList<>();
            for (PidSpec<SealedSecret> spec : update.pids()) {
                accounts.add(existing.get(spec.id()).updatedBy(spec));
            }
            repos.pids().updateAll(accounts);
            accounts.forEach(a -> changes.add(new DbChange.PidPut(a)));
            return "updated " + accounts.size();
        } else if (op instanceof Operation.Delete<SealedSecret> delete) {
            requireAll(delete.pidIds());
            repos.pids().deleteAll(delete.pidIds());
            delete.pidIds().forEach(id -> changes.add(new DbChange.PidRemoved(id)));
            return "deleted " + delete.pidIds().size();
        } else if (op instanceof Operation.Migrate<SealedSecret> migrate) {
            Map<String, PidRecord> existing = requireAll(migrate.pidIds());
            ensureModule(migrate.to(), changes);
            List<PidRecord> accounts = existing.values().stream()
                    .map(a -> a.withModule(migrate.to()))
                    .toList();
            repos.pids().updateAll(accounts);
            accounts.forEach(a -> changes.add(new DbChange.PidPut(a)));
            return "migrated " + accounts.size() + " to " + migrate.to();
        } else if (op instanceof Operation.ResetQuota<SealedSecret> reset) {
            requireAll(reset.pidIds()); // the reset itself is provisioned after the commit
            return "quota reset of " + reset.pidIds().size() + " recorded";
        } else if (op instanceof Operation.SetServers<SealedSecret> set) {
            ModuleConfig config = repos.modules()
                    .find(set.module())
                    .map(c -> new ModuleConfig(
                            c.key(),
                            set.servers(),
                            set.monthlyDemand(),
                            c.minPerInstance(),
                            c.instanceWeights(),
                            set.rebalanceDelay()))
                    .orElseGet(() -> new ModuleConfig(
                            set.module(), set.servers(), set.monthlyDemand(), 0, Map.of(), set.rebalanceDelay()));
            repos.modules().put(config);
            changes.add(new DbChange.ModulePut(config));
            return "servers of " + set.module() + " set to " + set.servers();
        }
        throw PidPoolException.invalid("operation", "unknown operation %s", op.type());
    }

    private Map<String, PidRecord> existing(List<String> ids) {
        Map<String, PidRecord> found = new HashMap<>();
        repos.pids().findAll(ids).forEach(a -> found.put(a.id(), a));
        return found;
    }

    private Map<String, PidRecord> requireAll(List<String> ids) {
        Map<String, PidRecord> found = existing(ids);
        if (found.size() != ids.size()) {
            Set<String> missing = new TreeSet<>(ids);
            missing.removeAll(found.keySet());
            throw PidPoolException.notFound("pids", "unknown PIDs: %s", missing);
        }
        return found;
    }

    private void ensureModule(ModuleKey key, List<DbChange> changes) {
        if (repos.modules().find(key).isEmpty()) {
            ModuleConfig config = ModuleConfig.of(key, 1);
            repos.modules().put(config);
            changes.add(new DbChange.ModulePut(config));
        }
    }
}
