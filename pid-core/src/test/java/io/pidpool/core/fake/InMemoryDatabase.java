package io.pidpool.core.fake;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchKey;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.DeductionBalance;
import io.pidpool.core.port.RefundReceipt;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.port.SequenceProgress;
import io.pidpool.core.port.SlotBinding;
import io.pidpool.core.port.StorageLimits;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * An in-memory store behind every repository port, with the database's rules: the same unique keys,
 * references and checks, raising the same {@link io.pidpool.core.error.PidPoolException}s, with the
 * same atomicity (a failed call or unit of work leaves nothing behind).
 *
 * <p>Concurrency: one {@link ReentrantLock} guards every table. Each repository call and each unit
 * of work ({@link io.pidpool.core.port.Transactor}) holds it from start to end, so calls are
 * serialised (stricter than the database's READ COMMITTED, which the contracts allow for). Every
 * change made while the lock is held pushes its inverse on an undo stack; a call that throws pops
 * and runs the inverses down to the mark it started at, which is how nested calls and units of work
 * roll back alone.
 */
public final class InMemoryDatabase {
    private final ReentrantLock lock = new ReentrantLock();
    /** Inverses of the changes of the running outermost call; guarded by {@link #lock}. */
    private final ArrayDeque<Runnable> undo = new ArrayDeque<>();

    private final Clock clock;
    private final Repositories repositories;

    final Table<ModuleKey, ModuleConfig> modules = new Table<>();
    final Table<String, PidRecord> pids = new Table<>();
    final Table<String, Assignment> assignments = new Table<>();
    final Table<SlotKey, SlotBinding> slots = new Table<>();
    final Table<BatchId, BatchRecord> batches = new Table<>();
    /** Idempotency keys by "requestedBy\nkey". */
    final Table<String, BatchKey> batchKeys = new Table<>();

    final Table<Long, AuditEntry> audit = new Table<>();
    final Table<String, DeductionBalance> deductions = new Table<>();
    final Table<String, RefundReceipt> refunds = new Table<>();
    final Table<String, SequenceProgress> clients = new Table<>();
    final Table<ClientSequence, String> sequences = new Table<>();
    /** The account version (key 0) and the log's horizon (key 1), as in migration V7. */
    final Table<Integer, Long> accountVersion = new Table<>();
    /** PIDs changed per account version. */
    final Table<Long, Set<String>> accountChanges = new Table<>();
    /** PIDs in cooldown ({@link InMemoryCooldownRepository}). */
    final Table<String, io.pidpool.core.port.Cooldown> cooldowns = new Table<>();
    /** The highest leader epoch (key 0), as in migration V8. */
    final Table<Integer, io.pidpool.core.model.Epoch> leaderEpoch = new Table<>();

    public InMemoryDatabase(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.repositories = new Repositories(
                new InMemoryTransactor(this),
                new InMemoryModuleRepository(this),
                new InMemoryPidRepository(this),
                new InMemoryAssignmentRepository(this),
                new InMemorySlotRepository(this),
                new InMemoryOperationLog(this),
                new InMemoryAuditLog(this),
                new InMemoryUsageLedger(this),
                new InMemoryLeaderFence(this));
    }

    /** A store whose timestamps come from the system clock. */
    public static InMemoryDatabase create() {
        return new InMemoryDatabase(Clock.systemUTC());
    }

    /** The repositories over this store, sharing one transactor. */
    public Repositories repositories() {
        return repositories;
    }

    /** Runs {@code work} atomically: if it throws, every change it made is undone. */
    <T> T write(Supplier<T> work) {
        lock.lock();
        int mark = undo.size();
        try {
            T result = work.get();
            if (lock.getHoldCount() == 1) {
                undo.clear(); // the outermost call committed
            }
            return result;
        } catch (RuntimeException | Error e) {
            while (undo.size() > mark) {
                undo.pop().run();
            }
            throw e;
        } finally {
            lock.unlock();
        }
    }

    <T> T read(Supplier<T> work) {
        lock.lock();
        try {
            return work.get();
        } finally {
            lock.unlock();
        }
    }

    /** Counts a change of accounts or modules (inside {@link #write}) and logs the PIDs it touched. */
    long bumpAccountVersion(Collection<String> pidIds) {
        long version = accountVersion() + 1;
        accountVersion.put(0, version);
        if (!pidIds.isEmpty()) {
            accountChanges.put(version, Set.copyOf(pidIds));
        }
        return version;
    }

    long accountVersion() {
        Long version = accountVersion.get(0);
        return version == null ? 0 : version;
    }

    long accountChangesPrunedBelow() {
        Long below = accountVersion.get(1);
        return below == null ? 0 : below;
    }

    Instant now() {
        return StorageLimits.stored(clock.instant());
    }

    /** A sorted table whose changes are undone with the call that made them. */
    final class Table<K extends Comparable<? super K>, V> {
        private final TreeMap<K, V> rows = new TreeMap<>();

        V get(K key) {
            return rows.get(key);
        }

        Optional<V> find(K key) {
            return Optional.ofNullable(rows.get(key));
        }

        boolean contains(K key) {
            return rows.containsKey(key);
        }

        void put(K key, V value) {
            requireWriting();
            V old = rows.put(key, value);
            undo.push(() -> restore(key, old));
        }

        void remove(K key) {
            requireWriting();
            V old = rows.remove(key);
            if (old != null) {
                undo.push(() -> rows.put(key, old));
            }
        }

        /** Rows in key order. */
        Collection<V> values() {
            return rows.values();
        }

        NavigableMap<K, V> range(K fromInclusive, K toInclusive) {
            return rows.subMap(fromInclusive, true, toInclusive, true);
        }

        List<V> valuesList() {
            return new ArrayList<>(rows.values());
        }

        private void restore(K key, V old) {
            if (old == null) {
                rows.remove(key);
            } else {
                rows.put(key, old);
            }
        }

        private void requireWriting() {
            if (!lock.isHeldByCurrentThread()) {
                throw new IllegalStateException("tables change only inside InMemoryDatabase.write");
            }
        }
    }

    record SlotKey(ModuleKey module, int slot) implements Comparable<SlotKey> {
        @Override
        public int compareTo(SlotKey other) {
            int byModule = module.compareTo(other.module);
            return byModule != 0 ? byModule : Integer.compare(slot, other.slot);
        }
    }

    record ClientSequence(String clientId, long sequence) implements Comparable<ClientSequence> {
        @Override
        public int compareTo(ClientSequence other) {
            int byClient = clientId.compareTo(other.clientId);
            return byClient != 0 ? byClient : Long.compare(sequence, other.sequence);
        }
    }
}
