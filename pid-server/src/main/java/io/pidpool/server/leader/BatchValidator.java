package io.pidpool.server.leader;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationType;
import io.pidpool.core.port.PendingEffect;
import io.pidpool.core.port.Repositories;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Checks a batch against the system before it is recorded, so that an operator hears "no such
 * PID" as a 4xx at once instead of a FAILED batch later. The leader still checks every operation
 * when it applies it ({@code BatchApplier}): this is the early, friendly check, not the guard.
 *
 * <p>The batch is checked against the <em>projected</em> state: the stored PIDs and modules, with the
 * batches that are recorded but not yet applied (PENDING, DEALING) replayed on top in id order, then
 * each operation of the new batch in its order. So a DELETE of a PID that an earlier, still pending
 * batch adds is accepted, and a second ADD of it is refused. A pending batch that later fails makes
 * the projection optimistic; the leader's check catches that case.
 *
 * <p>Rules (each names the offending field, e.g. {@code operations[1].pids[0].id}):
 *
 * <ul>
 *   <li>ADD: the module is known (configured, created by an earlier operation, or with instances
 *       registered in ZooKeeper), else NOT_FOUND; no PID exists already, else CONFLICT.
 *   <li>UPDATE, DELETE, RESET_QUOTA, MIGRATE: every PID exists, else NOT_FOUND.
 *   <li>MIGRATE: the target module is known, else NOT_FOUND; no PID is in it already, else
 *       INVALID_ARGUMENT on {@code to}.
 * </ul>
 *
 * <p>Reads only the PIDs the batch names, the module rows it names, and the operations of the
 * unfinished batches (bounded by {@link #PENDING_LOOKAHEAD}) with only the named PIDs of each
 * ({@link io.pidpool.core.port.OperationLog#pendingEffects}). Stateless and thread-safe.
 */
public final class BatchValidator {
    /** The most unfinished batches replayed; more than this waiting means the leader is far behind. */
    static final int PENDING_LOOKAHEAD = 1000;

    private final Repositories repos;
    private final Predicate<ModuleKey> registered;

    /**
     * @param registered whether a module has instances (or their traces) in ZooKeeper
     */
    public BatchValidator(Repositories repos, Predicate<ModuleKey> registered) {
        this.repos = Objects.requireNonNull(repos, "repos");
        this.registered = Objects.requireNonNull(registered, "registered");
    }

    /** Throws the first problem found; returns normally if the batch may be recorded. */
    public void check(List<Operation<String>> operations) {
        Set<String> named = new HashSet<>();
        operations.forEach(op -> named.addAll(op.pidIds()));
        Projection state = new Projection();
        state.where.putAll(repos.pids().modulesOf(named));
        // only the named PIDs' rows of the waiting batches: not every PID of every one of them
        repos.operations().pendingEffects(named, PENDING_LOOKAHEAD).forEach(state::replay);
        for (int i = 0; i < operations.size(); i++) {
            Operation<String> op = operations.get(i);
            check(op, "operations[" + i + "]", state);
            state.replay(PendingEffect.of(op, named));
        }
    }

    private void check(Operation<String> op, String at, Projection state) {
        List<String> ids = op.pidIds();
        switch (op.type()) {
            case ADD -> {
                ModuleKey module = ((Operation.Add<String>) op).module();
                requireKnown(module, at + ".module", state);
                for (int j = 0; j < ids.size(); j++) {
                    ModuleKey in = state.where.get(ids.get(j));
                    if (in != null) {
                        throw PidPoolException.conflict(
                                at + ".pids[" + j + "].id", "PID %s already exists (in module %s)", ids.get(j), in);
                    }
                }
            }
            case UPDATE, DELETE, RESET_QUOTA, MIGRATE -> {
                boolean specs = op.type() == OperationType.UPDATE;
                for (int j = 0; j < ids.size(); j++) {
                    if (!state.where.containsKey(ids.get(j))) {
                        throw PidPoolException.notFound(
                                at + ".pids[" + j + "]" + (specs ? ".id" : ""), "unknown PID %s", ids.get(j));
                    }
                }
                if (op instanceof Operation.Migrate<String> migrate) {
                    requireKnown(migrate.to(), at + ".to", state);
                    Set<String> already = new LinkedHashSet<>();
                    ids.stream()
                            .filter(id -> migrate.to().equals(state.where.get(id)))
                            .forEach(already::add);
                    if (!already.isEmpty()) {
                        throw PidPoolException.invalid(
                                at + ".to",
                                "MIGRATE to the module the PIDs are in already: %s in %s",
                                already,
                                migrate.to());
                    }
                }
            }
            case SET_SERVERS -> {
                // creates the module if needed; the core record checked the numbers
            }
        }
    }

    private void requireKnown(ModuleKey module, String field, Projection state) {
        if (state.known.contains(module)) {
            return;
        }
        boolean known = repos.modules().find(module).isPresent() || registered.test(module);
        if (!known) {
            throw PidPoolException.notFound(
                    field,
                    "unknown module %s: configure it first (PUT /api/v1/modules/{module}) or start an instance of it",
                    module);
        }
        state.known.add(module);
    }

    /**
     * Where the PIDs the new batch names are (absent: no such PID), and modules known to exist by
     * then; other PIDs do not matter.
     */
    private static final class Projection {
        final Map<String, ModuleKey> where = new HashMap<>();
        final Set<ModuleKey> known = new HashSet<>();

        /** A recorded, unapplied operation, or one of the new batch once it was checked. */
        void replay(PendingEffect op) {
            switch (op.type()) {
                case ADD -> {
                    known.add(op.module());
                    op.pidIds().forEach(id -> where.put(id, op.module()));
                }
                case DELETE -> op.pidIds().forEach(where::remove);
                case MIGRATE -> {
                    known.add(op.module());
                    op.pidIds().stream().filter(where::containsKey).forEach(id -> where.put(id, op.module()));
                }
                case SET_SERVERS -> known.add(op.module());
                case UPDATE, RESET_QUOTA -> {
                    // the PIDs stay where they are
                }
            }
        }
    }
}
