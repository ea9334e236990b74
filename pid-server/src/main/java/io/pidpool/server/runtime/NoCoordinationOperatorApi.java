package io.pidpool.server.runtime;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.server.http.OperatorApi;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The operator facade of a server whose coordination node (leader election, batches, module and
 * PID views) is not wired in: the cluster view has no leader, everything else answers {@code
 * UNAVAILABLE} (HTTP 503). Stands in until {@code io.pidpool.server.leader} provides the real one.
 */
final class NoCoordinationOperatorApi implements OperatorApi {
    private final String cluster;

    NoCoordinationOperatorApi(String cluster) {
        this.cluster = cluster;
    }

    @Override
    public ClusterView cluster() {
        return new ClusterView(cluster, null, Epoch.NONE, List.of());
    }

    @Override
    public List<ModuleView> modules() {
        throw missing();
    }

    @Override
    public Optional<ModuleView> module(ModuleKey module) {
        throw missing();
    }

    @Override
    public BatchId submit(List<Operation> operations, String requestedBy) {
        throw missing();
    }

    @Override
    public Optional<BatchRecord> batch(BatchId id) {
        throw missing();
    }

    @Override
    public CompletableFuture<BatchRecord> await(BatchId id, Duration timeout) {
        throw missing();
    }

    @Override
    public PidPage pids(PidQuery query) {
        throw missing();
    }

    private static PidPoolException missing() {
        return PidPoolException.unavailable("the coordination service is not running on this server", null);
    }
}
