package io.pidpool.server.runtime;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.port.StorageLimits;
import io.pidpool.server.http.OperatorApi;
import io.pidpool.server.http.RejectedWrite;
import io.pidpool.server.leader.BatchValidator;
import io.pidpool.server.leader.PidPoolNode;
import io.pidpool.server.leader.ReadModel;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator facade backed by this server's {@link PidPoolNode}: reads from its read model
 * (database + its ZooKeeper view; a follower answers too), batches through its {@code
 * BatchService} after the early checks of {@link BatchValidator} (in the transaction that records
 * the batch and its audit row), the batch history and the audit trail from the database. Thread-safe,
 * as the node is.
 */
final class NodeOperatorApi implements OperatorApi {
    private static final Logger log = LoggerFactory.getLogger(NodeOperatorApi.class);
    static final String REJECTED = "write.rejected";

    private final PidPoolNode node;
    private final Repositories repos;
    private final LongSupplier ids;
    private final Clock clock;
    private final BatchValidator validator;

    /**
     * @param repos the same store the node uses (for the audit trail, the batch history and the
     *     early checks of a batch)
     * @param ids Snowflake ids for audit rows
     */
    NodeOperatorApi(PidPoolNode node, Repositories repos, LongSupplier ids, Clock clock) {
        this.node = Objects.requireNonNull(node, "node");
        this.repos = Objects.requireNonNull(repos, "repos");
        this.ids = Objects.requireNonNull(ids, "ids");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.validator = new BatchValidator(repos, this::registered);
    }

    @Override
    public ClusterView cluster() {
        return clusterView(node.layout().cluster(), node.cluster());
    }

    @Override
    public List<ModuleView> modules() {
        return node.modules().stream().map(NodeOperatorApi::moduleView).toList();
    }

    @Override
    public Optional<ModuleView> module(ModuleKey module) {
        try {
            return Optional.of(moduleView(node.module(module)));
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public BatchId submit(List<Operation> operations, String requestedBy) {
        return node.batches().submit(operations, requestedBy, validator::check);
    }

    @Override
    public List<BatchRecord> batches(int limit) {
        return repos.operations().recent(limit);
    }

    @Override
    public List<AuditEntry> audit(int limit) {
        return repos.audit().recent(limit);
    }

    @Override
    public void rejected(RejectedWrite attempt) {
        try {
            repos.audit()
                    .append(new AuditEntry(
                            ids.getAsLong(),
                            clock.instant(),
                            StorageLimits.cut(attempt.actor(), StorageLimits.MAX_ACTOR),
                            REJECTED,
                            attempt.target(),
                            attempt.detail()));
        } catch (RuntimeException e) {
            log.warn("refused {} could not be audited: {}", attempt.target(), e.toString());
        }
    }

    /** Whether the module has a node with children under {@code /modules} (its instances' traces). */
    private boolean registered(ModuleKey module) {
        try {
            Stat stat = node.curator().checkExists().forPath(node.layout().module(module));
            return stat != null && stat.getNumChildren() > 0;
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not look up " + module + " in ZooKeeper", e);
        }
    }

    @Override
    public Optional<BatchRecord> batch(BatchId id) {
        return node.batches().get(id);
    }

    @Override
    public CompletableFuture<BatchRecord> await(BatchId id, Duration timeout) {
        return node.batches().await(id, timeout);
    }

    @Override
    public PidPage pids(PidQuery query) {
        return page(node.pids(query.module(), query.state()), query);
    }

    // ---------------------------------------------------------------- mapping (static, unit-tested)

    static ClusterView clusterView(String cluster, ReadModel.Cluster c) {
        String leader = c.leaderId() == null || c.leaderId().isEmpty() ? null : c.leaderId();
        return new ClusterView(
                cluster,
                c.nodeId(),
                leader,
                c.epoch(),
                c.members().stream()
                        .sorted()
                        .map(id -> new Member(id, id.equals(leader)))
                        .toList());
    }

    static ModuleView moduleView(ReadModel.Module m) {
        return new ModuleView(
                m.key(),
                m.config().servers(),
                m.config().monthlyDemand(),
                m.pids(),
                m.assignable(),
                m.held(),
                m.instances().stream()
                        .map(i -> new InstanceView(i.id(), i.host(), i.weight(), i.live(), i.held(), i.pending()))
                        .toList());
    }

    static PidView pidView(ReadModel.Pid p) {
        return new PidView(
                p.id(),
                p.module(),
                p.status(),
                p.monthlyQuota(),
                p.overageAllowance(),
                p.instance(),
                p.nodeState(),
                p.error());
    }

    /** Filters by status, pages by id ({@code pids} is sorted by id, as the read model returns it). */
    static PidPage page(List<ReadModel.Pid> pids, PidQuery query) {
        List<PidView> matching = pids.stream()
                .filter(p -> query.status() == null || p.status() == query.status())
                .filter(p -> query.after() == null || p.id().compareTo(query.after()) > 0)
                .limit(query.limit() + 1L)
                .map(NodeOperatorApi::pidView)
                .toList();
        if (matching.size() <= query.limit()) {
            return new PidPage(matching, null);
        }
        List<PidView> page = matching.subList(0, query.limit());
        return new PidPage(page, page.get(page.size() - 1).id());
    }
}
