package io.pidpool.server.runtime;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.port.StorageLimits;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.server.http.OperatorApi;
import io.pidpool.server.http.RejectedWrite;
import io.pidpool.server.leader.BatchValidator;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.ReadModel;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator facade backed by this server's {@link ClusterMember}: reads from its read model
 * (database + its ZooKeeper view; a follower answers too), batches through its {@code
 * BatchService} after the early checks of {@link BatchValidator} (in the transaction that records
 * the batch and its audit row), the batch history and the audit trail from the database. Thread-safe,
 * as the node is.
 */
final class NodeOperatorApi implements OperatorApi {
    private static final Logger log = LoggerFactory.getLogger(NodeOperatorApi.class);
    static final String REJECTED = "write.rejected";
    private static final MonthlyWindow WINDOW = new MonthlyWindow(ZoneOffset.UTC);

    private final ClusterMember node;
    private final Repositories repos;
    private final LongSupplier ids;
    private final Clock clock;
    private final BatchValidator validator;

    /**
     * @param repos the same store the node uses (for the audit trail, the batch history and the
     *     early checks of a batch)
     * @param ids Snowflake ids for audit rows
     */
    NodeOperatorApi(ClusterMember node, Repositories repos, LongSupplier ids, Clock clock) {
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
        List<ReadModel.Module> modules = node.modules();
        Usage usage = usage(node.pids(null, null));
        return modules.stream().map(m -> moduleView(m, usage)).toList();
    }

    @Override
    public Optional<ModuleView> module(ModuleKey module) {
        try {
            ReadModel.Module m = node.module(module);
            return Optional.of(moduleView(m, usage(node.pids(module, null))));
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public BatchRecord submit(List<Operation<String>> operations, String requestedBy) {
        return node.batches().record(operations, requestedBy, validator::check, null, null);
    }

    @Override
    public BatchRecord submit(
            List<Operation<String>> operations, String requestedBy, IdempotencyKey key, String fingerprint) {
        return node.batches().record(operations, requestedBy, validator::check, key, fingerprint);
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
    public List<AuditEntry> auditBefore(long id, int limit) {
        return repos.audit().olderThan(id, limit);
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
        return page(node.pids(query.module(), query.state()), query, monthUsage());
    }

    @Override
    public Optional<PidDetail> pid(String id) {
        Optional<io.pidpool.core.model.PidRecord> account = repos.pids().find(id);
        if (account.isEmpty()) {
            return Optional.empty();
        }
        ModuleKey module = account.get().module();
        return node.pids(module, null).stream()
                .filter(p -> p.id().equals(id))
                .findFirst()
                .map(p -> PidDetail.of(pidView(p, monthUsage()), account.get().attributes()));
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

    /** This month's usage by PID and the quota sum by module, for the module views. */
    record Usage(Map<String, Long> byPid, Map<ModuleKey, Long> quotaByModule, Map<ModuleKey, Long> usedByModule) {
        static final Usage NONE = new Usage(Map.of(), Map.of(), Map.of());
    }

    private Usage usage(List<ReadModel.Pid> pids) {
        Map<String, Long> byPid = monthUsage();
        Map<ModuleKey, Long> quota = new HashMap<>();
        Map<ModuleKey, Long> used = new HashMap<>();
        for (ReadModel.Pid p : pids) {
            quota.merge(p.module(), p.monthlyQuota(), Long::sum);
            used.merge(p.module(), byPid.getOrDefault(p.id(), 0L), Long::sum);
        }
        return new Usage(byPid, quota, used);
    }

    /** Net usage of the current month (UTC, the SDK's default window) by PID; empty if unreadable. */
    private Map<String, Long> monthUsage() {
        try {
            return repos.usage().netUsageByPid(WINDOW.current(clock).value());
        } catch (PidPoolException e) {
            log.warn("usage ledger unreadable, views show no usage: {}", e.getMessage());
            return Map.of();
        }
    }

    static ModuleView moduleView(ReadModel.Module m) {
        return moduleView(m, Usage.NONE);
    }

    static ModuleView moduleView(ReadModel.Module m, Usage usage) {
        return new ModuleView(
                m.key(),
                m.config().servers(),
                m.config().monthlyDemand(),
                m.pids(),
                m.assignable(),
                m.held(),
                m.instances().stream()
                        .map(i -> new InstanceView(i.id(), i.host(), i.weight(), i.live(), i.held(), i.pending()))
                        .toList(),
                usage.quotaByModule().getOrDefault(m.key(), 0L),
                usage.usedByModule().getOrDefault(m.key(), 0L),
                m.config().rebalanceDelay() == null
                        ? null
                        : m.config().rebalanceDelay().toMillis());
    }

    static PidView pidView(ReadModel.Pid p) {
        return pidView(p, Map.of());
    }

    static PidView pidView(ReadModel.Pid p, Map<String, Long> used) {
        return new PidView(p, used.getOrDefault(p.id(), 0L));
    }

    /** Filters by status, pages by id ({@code pids} is sorted by id, as the read model returns it). */
    static PidPage page(List<ReadModel.Pid> pids, PidQuery query) {
        return page(pids, query, Map.of());
    }

    static PidPage page(List<ReadModel.Pid> pids, PidQuery query, Map<String, Long> used) {
        List<PidView> matching = pids.stream()
                .filter(p -> query.status() == null || p.status() == query.status())
                .filter(p -> query.after() == null || p.id().compareTo(query.after()) > 0)
                .limit(query.limit() + 1L)
                .map(p -> pidView(p, used))
                .toList();
        if (matching.size() <= query.limit()) {
            return new PidPage(matching, null);
        }
        List<PidView> page = matching.subList(0, query.limit());
        return new PidPage(page, page.get(page.size() - 1).pid().id());
    }
}
