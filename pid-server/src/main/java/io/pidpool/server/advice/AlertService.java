package io.pidpool.server.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertEvaluation;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.port.AlertStore;
import io.pidpool.server.leader.AlertSink;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Raises, de-duplicates, resolves, logs and announces alerts: the one writer of the {@link
 * AlertStore}. Two sources feed it: the leader's events through {@link #leaderSink()} (cooldown,
 * mass-failure brake, stuck instances) and the monitor's evaluations of the alert rules ({@link
 * #apply}). A new episode is logged at WARN and announced once to the {@link AlertNotifier} (the
 * webhook); a repeat of an open alert only updates it; a resolution is logged and announced.
 *
 * <p>Concurrency: all writes run on one thread of its own ({@link #executor()}, which the monitor
 * shares), so the leader's serial executor never waits for the database and no two changes of the
 * store race. Reads ({@link #open}, {@link #recent}) go straight to the store from any thread.
 */
public final class AlertService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AlertService.class);

    /**
     * One-off leader events (an instance that did not answer, an unusable node) are not cleared by
     * the leader; they resolve when not reported again for this long.
     */
    static final Duration LEADER_EVENT_TTL = Duration.ofHours(1);

    private final AlertStore store;
    private final LongSupplier ids;
    private final Clock clock;
    private final AlertNotifier notifier;
    private final ScheduledExecutorService executor;

    public AlertService(AlertStore store, LongSupplier ids, Clock clock, AlertNotifier notifier) {
        this.store = requireNonNull(store, "store");
        this.ids = requireNonNull(ids, "ids");
        this.clock = requireNonNull(clock, "clock");
        this.notifier = requireNonNull(notifier, "notifier");
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pidpool-alerts");
            t.setDaemon(true);
            return t;
        });
    }

    /** The thread that owns every write; the monitor runs its evaluations here too. */
    ScheduledExecutorService executor() {
        return executor;
    }

    /**
     * The leader's sink: logs every line as the default sink did, and stores those that are alerts.
     * Never blocks the leader: the work is queued on this service's thread.
     */
    public AlertSink leaderSink() {
        return new AlertSink() {
            @Override
            public void alert(String message) {
                log.warn("{}", message);
                submit(() -> LeaderAlerts.classify(message, clock.instant()).ifPresent(action -> {
                    if (action instanceof LeaderAlerts.Raise raise) {
                        raise(raise.alert());
                    } else if (action instanceof LeaderAlerts.Resolve resolve) {
                        resolve(resolve.key());
                    }
                }));
            }

            @Override
            public void cleared(String key) {
                log.info("leader condition {} cleared", key);
                LeaderAlerts.resolvedBy(key).ifPresent(alertKey -> submit(() -> resolve(alertKey)));
            }
        };
    }

    private void submit(Runnable work) {
        try {
            executor.execute(() -> {
                try {
                    work.run();
                } catch (RuntimeException e) {
                    // the store is down: the rules raise the lasting conditions again on their next run
                    log.warn("could not store an alert: {}", e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            log.debug("alert service closed; alert only logged");
        }
    }

    /**
     * {@link #raise} on this service's thread, for callers that must not wait for the store (the
     * usage sync); if the store is down the alert is only logged.
     */
    public void raiseLater(Alert alert) {
        requireNonNull(alert, "alert");
        log.warn("{}", alert.message());
        submit(() -> raise(alert));
    }

    /** Opens {@code alert}, or counts one more occurrence of its open episode. */
    public AlertStore.Raised raise(Alert alert) {
        AlertStore.Raised raised = store.raise(ids.getAsLong(), alert, clock.instant());
        if (raised.created()) {
            StoredAlert a = raised.alert();
            log.warn(
                    "alert {} raised ({}, {}): {}",
                    a.id(),
                    a.key(),
                    a.alert().severity(),
                    a.alert().message());
            announce(AlertNotifier.Event.RAISED, a);
        }
        return raised;
    }

    /** Resolves the open episode of {@code key}, if there is one. */
    public Optional<StoredAlert> resolve(String key) {
        Optional<StoredAlert> resolved = store.resolve(key, clock.instant());
        resolved.ifPresent(a -> {
            log.info("alert {} resolved ({})", a.id(), a.key());
            announce(AlertNotifier.Event.RESOLVED, a);
        });
        return resolved;
    }

    private void announce(AlertNotifier.Event event, StoredAlert alert) {
        try {
            notifier.notify(event, alert);
        } catch (RuntimeException e) {
            log.warn("alert {} stored, but its {} notification failed: {}", alert.id(), event, e.getMessage());
        }
    }

    /**
     * Stores one evaluation of the alert rules: raises what holds (new episodes for new keys, one more
     * occurrence for open ones) and resolves what stopped holding. Also resolves one-off leader events
     * and usage ledger alerts not seen again for {@link #LEADER_EVENT_TTL}.
     */
    public void apply(AlertEvaluation evaluation) {
        for (Alert alert : evaluation.open()) {
            raise(alert);
        }
        for (Alert alert : evaluation.resolved()) {
            resolve(alert.key());
        }
        Instant expired = clock.instant().minus(LEADER_EVENT_TTL);
        for (StoredAlert open : store.open()) {
            boolean oneOff = (open.alert().kind() == AlertKind.LEADER_EVENT
                            && !open.key().endsWith(":unassignable"))
                    || open.alert().kind() == AlertKind.USAGE_LEDGER;
            if (oneOff && open.lastSeen().isBefore(expired)) {
                resolve(open.key());
            }
        }
    }

    /** Every open alert, oldest first. */
    public List<StoredAlert> open() {
        return store.open();
    }

    /** The newest alerts of any state, newest first. */
    public List<StoredAlert> recent(int limit) {
        return store.recent(limit);
    }

    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
