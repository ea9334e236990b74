package io.pidpool.core.fake;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.port.BatchKey;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.OperationLog;
import io.pidpool.core.port.StorageLimits;
import java.util.List;
import java.util.Optional;

/** {@link OperationLog} over an {@link InMemoryDatabase}. Thread-safe. */
public final class InMemoryOperationLog implements OperationLog {
    private final InMemoryDatabase db;

    InMemoryOperationLog(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public void append(BatchRecord batch) {
        Preconditions.requireNonNull(batch, "batch");
        Preconditions.requireArgument(
                batch.status() == BatchStatus.PENDING && batch.epoch().equals(Epoch.NONE),
                "status",
                "a new batch must be PENDING without epoch, was %s at epoch %d",
                batch.status(),
                batch.epoch().value());
        db.write(() -> {
            if (db.batches.contains(batch.id())) {
                throw PidPoolException.conflict("id", "batch %s already exists", batch.id());
            }
            db.batches.put(batch.id(), batch);
            return null;
        });
    }

    @Override
    public void append(BatchRecord batch, BatchKey key) {
        Preconditions.requireNonNull(batch, "batch");
        Preconditions.requireNonNull(key, IdempotencyKey.FIELD);
        requireKeyOf(batch, key);
        db.write(() -> {
            append(batch);
            String id = keyId(key.requestedBy(), key.key());
            if (db.batchKeys.contains(id)) {
                throw PidPoolException.conflict(
                        IdempotencyKey.FIELD,
                        "%s %s of %s was used before",
                        IdempotencyKey.FIELD,
                        key.key(),
                        key.requestedBy());
            }
            db.batchKeys.put(id, key);
            return null;
        });
    }

    @Override
    public Optional<BatchKey> findKey(String requestedBy, IdempotencyKey key) {
        Preconditions.requireNonNull(requestedBy, "requestedBy");
        Preconditions.requireNonNull(key, IdempotencyKey.FIELD);
        return db.read(() -> db.batchKeys.find(keyId(requestedBy, key)));
    }

    /** The key must name the batch it is stored with. */
    static void requireKeyOf(BatchRecord batch, BatchKey key) {
        Preconditions.requireArgument(
                key.batch().equals(batch.id()) && key.requestedBy().equals(batch.requestedBy()),
                IdempotencyKey.FIELD,
                "the idempotency key must name batch %s of %s",
                batch.id(),
                batch.requestedBy());
    }

    private static String keyId(String requestedBy, IdempotencyKey key) {
        return requestedBy + "\n" + key.value();
    }

    @Override
    public Optional<BatchRecord> find(BatchId id) {
        Preconditions.requireNonNull(id, "id");
        return db.read(() -> db.batches.find(id));
    }

    @Override
    public List<BatchRecord> findUnfinished(int limit) {
        StorageLimits.requireLimit(limit);
        return db.read(() -> db.batches.values().stream()
                .filter(b -> !b.status().isFinal())
                .limit(limit)
                .toList());
    }

    @Override
    public List<BatchRecord> recent(int limit) {
        StorageLimits.requireLimit(limit);
        return db.read(() -> {
            List<BatchRecord> all = new java.util.ArrayList<>(db.batches.values());
            java.util.Collections.reverse(all);
            return List.copyOf(all.subList(0, Math.min(limit, all.size())));
        });
    }

    @Override
    public BatchRecord transition(BatchId id, BatchStatus next, List<OperationResult> results, Epoch epoch) {
        Preconditions.requireNonNull(id, "id");
        return db.write(() -> {
            BatchRecord stored = db.batches.get(id);
            if (stored == null) {
                throw PidPoolException.notFound("id", "batch %s does not exist", id);
            }
            BatchRecord moved = stored.transition(next, results, epoch, db.now());
            db.batches.put(id, moved);
            return moved;
        });
    }
}
