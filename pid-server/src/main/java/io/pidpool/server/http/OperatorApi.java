package io.pidpool.server.http;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.server.leader.ReadModel;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * What the operator HTTP API needs from the cluster: the one seam between {@code HttpApi} and the
 * coordination code. Implementations throw {@link io.pidpool.core.error.PidPoolException} only
 * (e.g. {@code UNAVAILABLE} when ZooKeeper or the database cannot be reached), and must be safe to
 * call from many HTTP threads at once.
 */
public interface OperatorApi {

    /** Leader, epoch and members as this server sees them. */
    ClusterView cluster();

    /** Every module with a configuration or PIDs, sorted by key. */
    List<ModuleView> modules();

    Optional<ModuleView> module(ModuleKey module);

    /**
     * Records an operator batch (any server may accept one; the leader applies it) and returns it as
     * recorded (PENDING) once it is stored. Validates the whole batch first: a rejected batch changes
     * nothing.
     *
     * @param requestedBy who asked (the token's name), for the audit trail
     */
    BatchRecord submit(List<Operation<String>> operations, String requestedBy);

    /**
     * {@link #submit(List, String)} under the principal's idempotency key: the same key with the same
     * {@code fingerprint} answers the batch the key made first, as it is stored now (nothing new is
     * recorded), another fingerprint is {@code CONFLICT} on {@code Idempotency-Key} (docs/http-api.md).
     */
    default BatchRecord submit(
            List<Operation<String>> operations, String requestedBy, IdempotencyKey key, String fingerprint) {
        throw io.pidpool.core.error.PidPoolException.illegalState("idempotency keys are not supported here");
    }

    /** The batch as stored now (secrets sealed), if it exists. */
    Optional<BatchRecord> batch(BatchId id);

    /**
     * Completes with the batch once it is final, or with its current state when {@code timeout}
     * passes first; completes exceptionally with {@code NOT_FOUND} for an unknown id. Must not
     * block the caller.
     */
    CompletableFuture<BatchRecord> await(BatchId id, Duration timeout);

    /** One page of PIDs matching the query, sorted by id. */
    PidPage pids(PidQuery query);

    /** One PID with its attributes (never its secret), if it exists. */
    Optional<PidDetail> pid(String id);

    /** The newest batches, newest first, at most {@code limit}. */
    List<BatchRecord> batches(int limit);

    /** The newest audit entries, newest first, at most {@code limit}. */
    List<AuditEntry> audit(int limit);

    /** The entries older than entry {@code id}, newest first, at most {@code limit}; empty if none. */
    List<AuditEntry> auditBefore(long id, int limit);

    /**
     * Writes a refused write attempt (401, 403, validation failure, too large …) to the audit trail,
     * in a transaction of its own (nothing else was written). Never throws: a failure is logged,
     * since the caller is already answering with an error.
     */
    void rejected(RejectedWrite attempt);

    /**
     * @param self the id of the server that answers
     * @param leader the leader's id, or {@code null} while there is none
     * @param epoch the current epoch in {@code /epoch}
     */
    record ClusterView(String cluster, String self, String leader, Epoch epoch, List<Member> members) {
        public ClusterView {
            members = List.copyOf(members);
        }
    }

    /** One pid-server process taking part in the leader election. */
    record Member(String id, boolean leader) {}

    /**
     * @param pids accounts of the module
     * @param assignable the ACTIVE ones
     * @param held of those, held by a live instance
     * @param monthlyQuota the sum of its accounts' monthly quotas
     * @param used commands used this month on its accounts (the usage ledger: deductions minus
     *     refunds, as far as they have been synced from Redis)
     * @param rebalanceDelayMs the module's own rebalance delay, or {@code null} when it uses the
     *     server's default
     */
    record ModuleView(
            ModuleKey module,
            int servers,
            long monthlyDemand,
            int pids,
            int assignable,
            int held,
            List<InstanceView> instances,
            long monthlyQuota,
            long used,
            Long rebalanceDelayMs) {
        public ModuleView {
            instances = List.copyOf(instances);
        }

        /** With the server's default rebalance delay. */
        public ModuleView(
                ModuleKey module,
                int servers,
                long monthlyDemand,
                int pids,
                int assignable,
                int held,
                List<InstanceView> instances,
                long monthlyQuota,
                long used) {
            this(module, servers, monthlyDemand, pids, assignable, held, instances, monthlyQuota, used, null);
        }

        /** Without usage figures. */
        public ModuleView(
                ModuleKey module,
                int servers,
                long monthlyDemand,
                int pids,
                int assignable,
                int held,
                List<InstanceView> instances) {
            this(module, servers, monthlyDemand, pids, assignable, held, instances, 0, 0);
        }
    }

    /**
     * A client instance of a module.
     *
     * @param live whether its ephemeral node exists
     * @param held PIDs it acknowledged
     * @param pending PIDs on their way to or from it (ADDING, DELETING)
     */
    record InstanceView(InstanceId instance, String host, int weight, boolean live, int held, int pending) {}

    /**
     * A PID as the list shows it: the read model's fields (flat in JSON: {@code id}, {@code module},
     * {@code status}, quotas, {@code instance}, {@code nodeState}, {@code error}) and its usage.
     *
     * @param used commands used this month (the usage ledger, as far as synced from Redis)
     */
    record PidView(@JsonUnwrapped ReadModel.Pid pid, long used) {
        public PidView {
            java.util.Objects.requireNonNull(pid, "pid");
        }

        /** Without a usage figure. */
        public PidView(ReadModel.Pid pid) {
            this(pid, 0);
        }
    }

    /**
     * One PID as {@code GET /api/v1/pids/{id}} shows it: the list's fields (flat in JSON) and its
     * attributes. There is deliberately no field for the password, sealed or not.
     */
    record PidDetail(@JsonUnwrapped PidView pid, java.util.Map<String, String> attributes) {
        public PidDetail {
            java.util.Objects.requireNonNull(pid, "pid");
            attributes = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(attributes)); // sorted
        }

        public static PidDetail of(PidView view, java.util.Map<String, String> attributes) {
            return new PidDetail(view, attributes);
        }
    }

    /**
     * A filter and a page. Every filter may be {@code null} (no filter).
     *
     * @param after return ids strictly greater than this one ({@code null}: from the start)
     * @param limit at most this many, 1..{@link #MAX_LIMIT}
     */
    record PidQuery(ModuleKey module, PidState state, PidAvailability status, String after, int limit) {
        public static final int DEFAULT_LIMIT = 1000;
        public static final int MAX_LIMIT = 10_000;
    }

    /** @param next the {@code after} value of the next page, or {@code null} on the last page */
    record PidPage(List<PidView> pids, String next) {
        public PidPage {
            pids = List.copyOf(pids);
        }
    }
}
