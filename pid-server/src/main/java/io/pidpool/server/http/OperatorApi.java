package io.pidpool.server.http;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.PidStatus;
import io.pidpool.core.port.BatchRecord;
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
     * Records an operator batch (any server may accept one; the leader applies it) and returns its
     * id once it is stored. Validates the whole batch first: a rejected batch changes nothing.
     *
     * @param requestedBy who asked (the token's name), for the audit trail
     */
    BatchId submit(List<Operation> operations, String requestedBy);

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

    /**
     * @param leader the leader's member id, or {@code null} while there is none
     */
    record ClusterView(String cluster, String leader, Epoch epoch, List<Member> members) {
        public ClusterView {
            members = List.copyOf(members);
        }
    }

    /** One pid-server process of the cluster. */
    record Member(String id, String address, boolean leader) {}

    /**
     * @param pids how many PIDs the module owns
     * @param used commands used this month by the module's PIDs
     * @param quota the sum of their monthly quotas
     */
    record ModuleView(
            ModuleKey module,
            int servers,
            long monthlyDemand,
            int pids,
            List<InstanceView> instances,
            long used,
            long quota) {
        public ModuleView {
            instances = List.copyOf(instances);
        }
    }

    /** A live client instance of a module and how many PIDs it holds. */
    record InstanceView(InstanceId instance, int held) {}

    /**
     * @param instance the holder, or {@code null} when unassigned
     * @param nodeState the state of its ZooKeeper node, or {@code null} when unassigned
     */
    record PidView(
            String id,
            ModuleKey module,
            InstanceId instance,
            PidState nodeState,
            PidStatus status,
            long used,
            long quota) {}

    /**
     * A filter and a page. Every filter may be {@code null} (no filter).
     *
     * @param after return ids strictly greater than this one ({@code null}: from the start)
     * @param limit at most this many, 1..{@link #MAX_LIMIT}
     */
    record PidQuery(ModuleKey module, PidState state, PidStatus status, String after, int limit) {
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
