package io.pidpool.server.leader;

import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.Ticker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A follower's copy of the accounts ({@link DbView}), kept close to the database so that a new leader
 * need not load 100,000 accounts before it serves. It is only a head start: the term that
 * {@link #take()}s it must bring it to the database's current account version with
 * {@link LeaderDatabase#changesSince(long)} before using it, and loads everything if the store cannot
 * say what changed ({@link TermLoader#loadAccounts}, at the term start). A copy that is behind is
 * therefore never used as it is; it costs the term only the changes it lacks.
 *
 * <p>While following, it asks the store every {@code interval} what changed since its version (one
 * read of the version row when nothing did) and applies it; the first time, and whenever the store
 * cannot tell (pruned log), it loads everything. Stores without an account version (in-memory fakes)
 * are loaded never: the term takes nothing and loads cold, as before.
 *
 * <p>Concurrency: the refreshes run on this object's own thread, the database reads outside the
 * lock; {@link #take()} and {@link #resume()} run on the node's serial executor. The monitor guards
 * {@link #view} and {@link #paused}: a refresh applies what it read only if the view it read for is
 * still here and nobody took it meanwhile.
 */
final class WarmAccounts implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WarmAccounts.class);

    /**
     * A node whose term ended waits this long before loading every account again: that load would
     * compete with its successor's term start for the database (and, on a shared machine, the CPU).
     */
    static final Duration RESUME_DELAY = Duration.ofSeconds(10);

    private final LeaderDatabase store;
    private final Duration interval;
    private final Ticker ticker;
    private final ScheduledExecutorService thread;

    private DbView view;
    private boolean paused;
    private boolean unversioned;
    /** Ticker time before which no refresh runs (set by {@link #resume()}). */
    private long notBefore;

    WarmAccounts(LeaderDatabase store, Duration interval, Ticker ticker, String nodeId) {
        this.store = store;
        this.interval = interval;
        this.ticker = ticker;
        this.notBefore = ticker.read();
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pidpool-warm-" + nodeId);
            t.setDaemon(true);
            return t;
        });
    }

    void start() {
        if (interval.isZero() || interval.isNegative()) {
            return;
        }
        long millis = Math.max(1, interval.toMillis());
        thread.scheduleWithFixedDelay(this::refreshQuietly, 0, millis, TimeUnit.MILLISECONDS);
    }

    /**
     * Hands the copy over (this node is about to lead) and stops refreshing until {@link #resume()}.
     * Empty if there is none yet. The caller must prove it current before use.
     */
    synchronized Optional<DbView> take() {
        paused = true;
        DbView taken = view;
        view = null;
        return Optional.ofNullable(taken);
    }

    /**
     * The node follows again: refresh from scratch (the term's view went on without versions), after
     * {@link #RESUME_DELAY}.
     */
    synchronized void resume() {
        paused = false;
        notBefore = ticker.read() + RESUME_DELAY.toNanos();
    }

    /** The version of the copy, or {@link AccountSnapshot#UNVERSIONED} if there is none (for tests). */
    synchronized long version() {
        return view == null ? AccountSnapshot.UNVERSIONED : view.version();
    }

    /** Runs one refresh now, on the caller's thread (tests). */
    void refresh() {
        DbView current;
        synchronized (this) {
            if (paused || unversioned || ticker.read() - notBefore < 0) {
                return;
            }
            current = view;
        }
        if (current != null) {
            Optional<AccountChanges> changes = store.changesSince(current.version());
            if (changes.isPresent()) {
                if (!changes.get().none()) {
                    synchronized (this) {
                        if (!paused && view == current) {
                            current.apply(changes.get());
                        }
                    }
                }
                return;
            }
        }
        AccountSnapshot loaded = store.loadAccounts();
        if (!loaded.versioned()) {
            synchronized (this) {
                unversioned = true;
            }
            log.info("the store keeps no account version: a new leader loads every account");
            return;
        }
        DbView fresh = new DbView();
        fresh.load(loaded);
        synchronized (this) {
            if (!paused && view == current) {
                view = fresh;
            }
        }
    }

    private void refreshQuietly() {
        try {
            refresh();
        } catch (RuntimeException e) {
            // the database may be down: the next attempt tries again, a new leader loads cold
            log.debug("warm accounts not refreshed: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
