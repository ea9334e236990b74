package io.pidpool.server.http;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.secret.SecretSealer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

/**
 * A fake of the HTTP facade: records batches in memory; {@link #await} "applies" a batch at once
 * (every operation ok) unless {@link #completeOnAwait} is off. {@link #failNext} makes the next
 * call throw, to test the error mapping.
 */
final class InMemoryOperatorApi implements OperatorApi {
    /** What was submitted, before sealing, for assertions. */
    record Submission(List<Operation<String>> operations, String requestedBy) {}

    static final SecretSealer SEALER = SecretSealer.fromSingleKey("MDEyMzQ1Njc4OWFiY2RlZg==");
    static final Instant NOW = Instant.parse("2026-11-21T08:00:00Z");

    final List<Submission> submitted = new CopyOnWriteArrayList<>();
    /** Calls of {@link #batch}. */
    final AtomicInteger batchReads = new AtomicInteger();

    final Map<ModuleKey, ModuleView> modules = new ConcurrentSkipListMap<>();
    final List<PidView> pids = new CopyOnWriteArrayList<>();
    /** Attributes by PID id, for {@link #pid}. */
    final Map<String, Map<String, String>> attributes = new ConcurrentHashMap<>();

    final AtomicReference<RuntimeException> failNext = new AtomicReference<>();
    volatile boolean completeOnAwait = true;
    /** When set, the next {@link #await} returns this future instead of answering at once. */
    final AtomicReference<CompletableFuture<BatchRecord>> nextAwait = new AtomicReference<>();

    volatile ClusterView cluster =
            new ClusterView("default", "server-1", "server-1", new Epoch(3), List.of(new Member("server-1", true)));

    private final Map<BatchId, BatchRecord> batches = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong(1_000_000_000_000L);

    void reset() {
        submitted.clear();
        modules.clear();
        pids.clear();
        attributes.clear();
        batches.clear();
        failNext.set(null);
        rejections.clear();
        nextAwait.set(null);
        completeOnAwait = true;
    }

    private void maybeFail() {
        RuntimeException e = failNext.getAndSet(null);
        if (e != null) {
            throw e;
        }
    }

    @Override
    public ClusterView cluster() {
        maybeFail();
        return cluster;
    }

    @Override
    public List<ModuleView> modules() {
        maybeFail();
        return List.copyOf(modules.values());
    }

    @Override
    public Optional<ModuleView> module(ModuleKey module) {
        maybeFail();
        return Optional.ofNullable(modules.get(module));
    }

    @Override
    public BatchRecord submit(List<Operation<String>> operations, String requestedBy) {
        maybeFail();
        OperationBatch batch = OperationBatch.pending(new BatchId(ids.incrementAndGet()), operations, requestedBy, NOW);
        BatchRecord recorded = BatchRecord.pending(batch, SEALER::seal);
        batches.put(batch.id(), recorded);
        submitted.add(new Submission(operations, requestedBy));
        return recorded;
    }

    @Override
    public Optional<BatchRecord> batch(BatchId id) {
        maybeFail();
        batchReads.incrementAndGet();
        return Optional.ofNullable(batches.get(id));
    }

    @Override
    public CompletableFuture<BatchRecord> await(BatchId id, Duration timeout) {
        maybeFail();
        CompletableFuture<BatchRecord> pending = nextAwait.getAndSet(null);
        if (pending != null) {
            return pending;
        }
        BatchRecord batch = batches.get(id);
        if (batch == null) {
            return CompletableFuture.failedFuture(PidPoolException.notFound("id", "no batch %s", id));
        }
        if (completeOnAwait && !batch.status().isFinal()) {
            batch = dealt(id);
        }
        return CompletableFuture.completedFuture(batch);
    }

    /** Marks a batch DEALED, every operation ok, as a leader would; returns it. */
    BatchRecord dealt(BatchId id) {
        BatchRecord batch = batches.get(id);
        List<OperationResult> results = IntStream.range(0, batch.operations().size())
                .mapToObj(OperationResult::ok)
                .toList();
        batch = batch.transition(BatchStatus.DEALED, results, new Epoch(1), NOW.plusSeconds(1));
        batches.put(id, batch);
        return batch;
    }

    BatchId lastId() {
        return new BatchId(ids.get());
    }

    /** Refused writes as the API reported them. */
    final List<RejectedWrite> rejections = new CopyOnWriteArrayList<>();

    @Override
    public List<BatchRecord> batches(int limit) {
        maybeFail();
        return batches.values().stream()
                .sorted(Comparator.comparing((BatchRecord b) -> b.id().value()).reversed())
                .limit(limit)
                .toList();
    }

    @Override
    public List<io.pidpool.core.port.AuditEntry> audit(int limit) {
        maybeFail();
        List<io.pidpool.core.port.AuditEntry> entries = new ArrayList<>();
        for (int i = rejections.size() - 1; i >= 0 && entries.size() < limit; i--) {
            RejectedWrite r = rejections.get(i);
            entries.add(new io.pidpool.core.port.AuditEntry(
                    i + 1, NOW, r.actor(), "write.rejected", r.target(), r.detail()));
        }
        return entries;
    }

    @Override
    public List<io.pidpool.core.port.AuditEntry> auditBefore(long id, int limit) {
        maybeFail();
        List<io.pidpool.core.port.AuditEntry> all = audit(Integer.MAX_VALUE);
        return all.stream().filter(e -> e.id() < id).limit(limit).toList();
    }

    @Override
    public void rejected(RejectedWrite attempt) {
        rejections.add(attempt);
    }

    @Override
    public PidPage pids(PidQuery query) {
        maybeFail();
        List<PidView> matching = new ArrayList<>();
        pids.stream()
                .sorted(Comparator.comparing((PidView p) -> p.pid().id()))
                .filter(p ->
                        query.module() == null || query.module().equals(p.pid().module()))
                .filter(p -> query.state() == null || query.state() == p.pid().nodeState())
                .filter(p -> query.status() == null || query.status() == p.pid().status())
                .filter(p -> query.after() == null || p.pid().id().compareTo(query.after()) > 0)
                .forEach(matching::add);
        List<PidView> page = matching.subList(0, Math.min(query.limit(), matching.size()));
        String next = matching.size() > query.limit()
                ? page.get(page.size() - 1).pid().id()
                : null;
        return new PidPage(page, next);
    }

    @Override
    public Optional<PidDetail> pid(String id) {
        maybeFail();
        return pids.stream()
                .filter(p -> p.pid().id().equals(id))
                .findFirst()
                .map(p -> PidDetail.of(p, attributes.getOrDefault(id, Map.of())));
    }
}
