package io.pidpool.core.fake;

import io.pidpool.core.singleflight.FlightClaim;
import io.pidpool.core.singleflight.FlightLease;
import io.pidpool.core.singleflight.FlightLocks;
import io.pidpool.core.singleflight.FlightRecord;
import io.pidpool.core.singleflight.FlightResults;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One in-memory coordination service for single-flight tests: per key a lock (held by a session)
 * and a versioned result node. {@link #session} gives each participant its ports; {@link #expire}
 * ends a session as ZooKeeper does (its locks vanish, its writes are refused from then on).
 * Futures of {@link FlightLocks#released} complete on the caller's thread when the lock goes, or on
 * {@link #wakeWaiters()}.
 *
 * <p>Thread-safe (one monitor).
 */
public final class InMemoryFlightCoordination {
    private record Lock(long sessionId, long round) {}

    private record Waiter(String key, long round, CompletableFuture<Void> future) {}

    private final Map<String, Lock> locks = new HashMap<>();
    private final Map<String, FlightRecord> results = new HashMap<>();
    private final Map<String, Integer> versions = new HashMap<>();
    private final Set<Long> dead = new HashSet<>();
    private final List<Waiter> waiters = new ArrayList<>();
    private long nextRound = 100;
    private long nextSession = 1;

    /** A new participant (one session). */
    public synchronized Session session() {
        return new Session(nextSession++);
    }

    /** Ends {@code session}: its locks are gone, its writes refused. */
    public void expire(Session session) {
        List<CompletableFuture<Void>> wake = new ArrayList<>();
        synchronized (this) {
            dead.add(session.id);
            locks.entrySet().removeIf(e -> e.getValue().sessionId() == session.id);
            wake.addAll(collectReleased());
        }
        wake.forEach(f -> f.complete(null));
    }

    /** Completes every pending wait (as a timeout or a connection event would). */
    public void wakeWaiters() {
        List<CompletableFuture<Void>> wake = new ArrayList<>();
        synchronized (this) {
            waiters.forEach(w -> wake.add(w.future()));
            waiters.clear();
        }
        wake.forEach(f -> f.complete(null));
    }

    public synchronized Optional<FlightRecord> stored(String key) {
        return Optional.ofNullable(results.get(key));
    }

    public synchronized boolean locked(String key) {
        return locks.containsKey(key);
    }

    public synchronized int waiting() {
        return waiters.size();
    }

    private List<CompletableFuture<Void>> collectReleased() {
        List<CompletableFuture<Void>> wake = new ArrayList<>();
        waiters.removeIf(w -> {
            Lock l = locks.get(w.key());
            if (l == null || l.round() != w.round()) {
                wake.add(w.future());
                return true;
            }
            return false;
        });
        return wake;
    }

    /** One participant's view: its session's ports. */
    public final class Session implements FlightLocks, FlightResults {
        private final long id;

        private Session(long id) {
            this.id = id;
        }

        public long id() {
            return id;
        }

        @Override
        public FlightLease.Acquisition tryAcquire(String key) {
            synchronized (InMemoryFlightCoordination.this) {
                Lock held = locks.get(key);
                if (held != null) {
                    return new FlightLease.Held(held.round());
                }
                if (dead.contains(id)) {
                    throw new IllegalStateException("session " + id + " expired");
                }
                Lock mine = new Lock(id, nextRound++);
                locks.put(key, mine);
                return new FlightLease.Acquired(new FlightLease(key, mine.round(), id));
            }
        }

        @Override
        public CompletableFuture<Void> released(String key, long round, Duration atMost) {
            synchronized (InMemoryFlightCoordination.this) {
                Lock l = locks.get(key);
                if (l == null || l.round() != round) {
                    return CompletableFuture.completedFuture(null);
                }
                CompletableFuture<Void> f = new CompletableFuture<>();
                waiters.add(new Waiter(key, round, f));
                return f;
            }
        }

        @Override
        public void release(FlightLease lease) {
            List<CompletableFuture<Void>> wake;
            synchronized (InMemoryFlightCoordination.this) {
                Lock l = locks.get(lease.key());
                if (l != null && l.round() == lease.round() && l.sessionId() == id && !dead.contains(id)) {
                    locks.remove(lease.key());
                }
                wake = collectReleased();
            }
            wake.forEach(f -> f.complete(null));
        }

        @Override
        public Optional<FlightRecord> read(String key) {
            synchronized (InMemoryFlightCoordination.this) {
                return Optional.ofNullable(results.get(key));
            }
        }

        @Override
        public Optional<FlightClaim> claim(FlightLease lease, FlightRecord pending) {
            synchronized (InMemoryFlightCoordination.this) {
                if (!holds(lease)) {
                    return Optional.empty();
                }
                int version = versions.merge(lease.key(), 1, Integer::sum);
                results.put(lease.key(), pending);
                return Optional.of(new FlightClaim(lease, version));
            }
        }

        @Override
        public boolean publish(FlightClaim claim, FlightRecord record) {
            synchronized (InMemoryFlightCoordination.this) {
                String key = claim.lease().key();
                if (!holds(claim.lease()) || versions.getOrDefault(key, 0) != claim.version()) {
                    return false;
                }
                versions.merge(key, 1, Integer::sum);
                results.put(key, record);
                return true;
            }
        }

        private boolean holds(FlightLease lease) {
            Lock l = locks.get(lease.key());
            return !dead.contains(id) && l != null && l.sessionId() == id && l.round() == lease.round();
        }
    }
}
