package io.pidpool.server.leader;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchKey;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Operator batches as any server accepts them (the follower path, made safe): {@link #submit}
 * seals the passwords, records the batch PENDING together with its audit row, and hands the
 * recorded batch to its member, which raises {@code /notify} to DEALING; the leader applies it
 * (exactly once, see {@link BatchApplier}) and answers DEALED. {@link #await} lets a request wait
 * for the outcome: waiters on this server share one {@code /notify} watcher and one poll of the
 * database (coalesced, as lock waiters), so a thousand waiting requests cost one query per poll,
 * of the batch's status only: its operations are read once, when it is final.
 *
 * <p>Concurrency: thread-safe. {@code this} guards the waiter table; database reads for waiters run
 * on the node's I/O scheduler, never on the leader's executor.
 */
public final class BatchService {
    private static final Logger log = LoggerFactory.getLogger(BatchService.class);

    private final Repositories repos;
    private final Function<String, SealedSecret> sealer;
    private final LongSupplier ids;
    private final Clock clock;
    private final Consumer<BatchRecord> recorded;
    private final ScheduledExecutorService io;
    private final Duration pollInterval;
    private final Map<BatchId, List<CompletableFuture<BatchRecord>>> waiters = new TreeMap<>();
    private ScheduledFuture<?> poller;

    BatchService(
            Repositories repos,
            Function<String, SealedSecret> sealer,
            LongSupplier ids,
            Clock clock,
            Consumer<BatchRecord> recorded,
            ScheduledExecutorService io,
            Duration pollInterval) {
        this.repos = repos;
        this.sealer = sealer;
        this.ids = ids;
        this.clock = clock;
        this.recorded = recorded;
        this.io = io;
        this.pollInterval = pollInterval;
    }

    /**
     * Validates, seals and records a batch, then wakes the leader. Returns once the batch is stored:
     * from then on it will be applied exactly once, whatever happens to the leader.
     *
     * @throws io.pidpool.core.error.PidPoolException INVALID_ARGUMENT (nothing stored) for a bad
     *     batch, UNAVAILABLE if the database cannot be reached
     */
    public BatchId submit(List<Operation<String>> operations, String requestedBy) {
        return submit(operations, requestedBy, ops -> {});
    }

    /**
     * {@link #submit(List, String)} after {@code check} accepted the operations: the check runs in
     * the transaction that records the batch and its audit row, so a check that throws records
     * nothing (e.g. {@link BatchValidator#check}).
     */
    public BatchId submit(
            List<Operation<String>> operations, String requestedBy, Consumer<List<Operation<String>>> check) {
        return record(operations, requestedBy, check, null, null).id();
    }

    /**
     * {@link #submit(List, String, Consumer)}, answering the batch itself: a new batch as it was
     * recorded (PENDING; it is not read back, so answering a batch of 10,000 PIDs costs no second
     * pass over its rows). Under an idempotency key of {@code requestedBy} the first request with
     * the key records the batch and the key in one transaction; a later one (a retry, also through
     * another server, also concurrent) gets that batch as it is stored now and records nothing, if
     * its {@code fingerprint} is the first one's. Keys are per principal and kept as long as their
     * batch (docs/http-api.md, "Idempotency keys").
     *
     * @param key {@code null}: no key (then {@code fingerprint} is ignored)
     * @param fingerprint what identifies the request (64 hex characters), e.g. a SHA-256 of it
     * @throws io.pidpool.core.error.PidPoolException as the other submit, and {@code CONFLICT} on
     *     {@code Idempotency-Key} when the principal used the key for another request (nothing stored)
     */
    public BatchRecord record(
            List<Operation<String>> operations,
            String requestedBy,
            Consumer<List<Operation<String>>> check,
            IdempotencyKey key,
            String fingerprint) {
        requireNonNull(operations, "operations");
        requireNonNull(check, "check");
        requireArgument(requestedBy != null && !requestedBy.isBlank(), "requestedBy", "requestedBy is required");
        // the batch's own rules first: a bad batch is refused even under a key used before
        BatchId id = new BatchId(ids.getAsLong());
        OperationBatch batch = OperationBatch.pending(id, operations, requestedBy, clock.instant());
        if (key != null) {
            Optional<BatchId> earlier = earlier(requestedBy, key, fingerprint);
            if (earlier.isPresent()) {
                return stored(earlier.get()); // a retry: the batch is recorded, and the leader knows of it
            }
        }
        BatchRecord record = BatchRecord.pending(batch, sealer);
        BatchKey batchKey = key == null ? null : new BatchKey(requestedBy, key, fingerprint, id);
        AuditEntry audit = new AuditEntry(
                ids.getAsLong(), clock.instant(), requestedBy, "batch.accepted", id.toString(), summary(operations));
        try {
            repos.transactor().useTransaction(() -> {
                check.accept(batch.operations());
                if (batchKey == null) {
                    repos.operations().append(record);
                } else {
                    repos.operations().append(record, batchKey);
                }
                repos.audit().append(audit);
            });
        } catch (PidPoolException e) {
            if (key != null && e.code() == ErrorCode.CONFLICT && IdempotencyKey.FIELD.equals(e.field())) {
                // a concurrent request with the same key committed first: answer with its batch
                return stored(earlier(requestedBy, key, fingerprint).orElseThrow(() -> e));
            }
            throw e;
        }
        try {
            recorded.accept(record);
        } catch (RuntimeException e) {
            // the leader polls the table as well: the batch is safe, only slower
            log.warn("batch {} recorded, but /notify could not be raised: {}", id, e.getMessage());
        }
        return record;
    }

    /** A batch known to be recorded (batches are never deleted while their key is kept). */
    private BatchRecord stored(BatchId id) {
        return get(id).orElseThrow(() -> PidPoolException.unavailable(
                "batch " + id + " was recorded but cannot be read back yet; GET /api/v1/batches/" + id, null));
    }

    /** The batch {@code requestedBy} made with {@code key}, if the request is the same; else CONFLICT. */
    private Optional<BatchId> earlier(String requestedBy, IdempotencyKey key, String fingerprint) {
        Optional<BatchKey> stored = repos.operations().findKey(requestedBy, key);
        if (stored.isPresent() && !stored.get().fingerprint().equals(fingerprint)) {
            throw PidPoolException.conflict(
                    IdempotencyKey.FIELD,
                    "%s '%s' was used for batch %s with another request; use a new key for a new batch",
                    IdempotencyKey.FIELD,
                    key,
                    stored.get().batch());
        }
        return stored.map(BatchKey::batch);
    }

    private static String summary(List<Operation<String>> operations) {
        Map<String, Integer> counts = new TreeMap<>();
        for (Operation<String> op : operations) {
            counts.merge(
                    op.type().name(), op.pidIds().isEmpty() ? 1 : op.pidIds().size(), Integer::sum);
        }
        return operations.size() + " operations " + counts;
    }

    /** The batch as stored now (one committed state: the log reads it on one snapshot). */
    public Optional<BatchRecord> get(BatchId id) {
        requireNonNull(id, "id");
        return repos.operations().find(id);
    }

    /**
     * Completes with the batch once it is DEALED or FAILED, or with its current state when
     * {@code timeout} passes first (check {@link BatchRecord#status()}). NOT_FOUND for an unknown id.
     */
    public CompletableFuture<BatchRecord> await(BatchId id, Duration timeout) {
        Supplier<PidPoolException> unknown = () -> PidPoolException.notFound("id", "no batch %s", id);
        if (repos.operations().findStatus(id).orElseThrow(unknown).isFinal()) {
            return CompletableFuture.completedFuture(get(id).orElseThrow(unknown));
        }
        var future = new CompletableFuture<BatchRecord>();
        synchronized (this) {
            waiters.computeIfAbsent(id, k -> new ArrayList<>()).add(future);
            if (poller == null) {
                long millis = Math.max(1, pollInterval.toMillis());
                poller = io.scheduleWithFixedDelay(this::check, millis, millis, TimeUnit.MILLISECONDS);
            }
        }
        io.schedule(() -> expire(id, future), Math.max(0, timeout.toMillis()), TimeUnit.MILLISECONDS);
        return future;
    }

    /** How many requests wait right now (for tests and metrics). */
    public synchronized int waiting() {
        return waiters.values().stream().mapToInt(List::size).sum();
    }

    /** {@code /notify} changed: look at the waited-for batches now. */
    void signalled() {
        synchronized (this) {
            if (waiters.isEmpty()) {
                return;
            }
        }
        io.execute(this::check);
    }

    private void check() {
        List<BatchId> ids;
        synchronized (this) {
            ids = List.copyOf(waiters.keySet());
        }
        for (BatchId id : ids) {
            try {
                // the status until it is final, then the batch once: a big batch is not read per look
                boolean done = repos.operations()
                        .findStatus(id)
                        .map(BatchStatus::isFinal)
                        .orElse(false);
                if (done) {
                    get(id).ifPresent(record -> complete(id, record));
                }
            } catch (RuntimeException e) {
                log.debug("batch poll failed: {}", e.getMessage());
                return;
            }
        }
    }

    private void complete(BatchId id, BatchRecord record) {
        List<CompletableFuture<BatchRecord>> done;
        synchronized (this) {
            done = waiters.remove(id);
            stopPollingIfIdle();
        }
        if (done != null) {
            done.forEach(f -> f.complete(record));
        }
    }

    private void expire(BatchId id, CompletableFuture<BatchRecord> future) {
        if (future.isDone()) {
            return;
        }
        synchronized (this) {
            List<CompletableFuture<BatchRecord>> list = waiters.get(id);
            if (list != null) {
                list.remove(future);
                if (list.isEmpty()) {
                    waiters.remove(id);
                }
            }
            stopPollingIfIdle();
        }
        try {
            future.complete(get(id).orElse(null));
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
        }
    }

    private void stopPollingIfIdle() {
        if (waiters.isEmpty() && poller != null) {
            poller.cancel(false);
            poller = null;
        }
    }

    void close() {
        List<CompletableFuture<BatchRecord>> all = new ArrayList<>();
        synchronized (this) {
            waiters.values().forEach(all::addAll);
            waiters.clear();
            stopPollingIfIdle();
        }
        all.forEach(f -> f.completeExceptionally(PidPoolException.unavailable("the server is shutting down", null)));
    }
}
