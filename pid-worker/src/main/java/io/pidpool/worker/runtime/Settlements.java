package io.pidpool.worker.runtime;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import io.pidpool.worker.runtime.HandlerRunner.Failed;
import io.pidpool.worker.runtime.HandlerRunner.NotStarted;
import io.pidpool.worker.runtime.HandlerRunner.Outcome;
import io.pidpool.worker.runtime.HandlerRunner.Succeeded;
import io.pidpool.worker.task.Failure;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskStore;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the outcomes of claimed batches to the store, and keeps those the store refused for a retry
 * before the next claim. Each step of a settlement (complete, fail, release) is conditional on the
 * claim id and status RUNNING and applied at most once, so a retry after an unknown outcome is
 * harmless; a settlement older than two leases is dropped (the reaper has returned those tasks by
 * then).
 *
 * <p>Not thread-safe: used from the pool's loop thread only.
 */
final class Settlements {
    /** Logs as the engine it belongs to: operators set log levels for {@code TaskWorker}. */
    private static final Logger LOG = LoggerFactory.getLogger(TaskWorker.class);

    private final String memberId;
    private final WorkerConfig config;
    private final TaskStore store;
    private final Clock clock;
    private final Ticker ticker;
    private final WorkerMetrics metrics;
    private final Deque<Settlement> unsettled = new ArrayDeque<>();

    Settlements(
            String memberId, WorkerConfig config, TaskStore store, Clock clock, Ticker ticker, WorkerMetrics metrics) {
        this.memberId = memberId;
        this.config = config;
        this.store = store;
        this.clock = clock;
        this.ticker = ticker;
        this.metrics = metrics;
    }

    /** Writes the outcomes of the batch claimed as {@code claimId}; throws (and keeps them) if the store fails. */
    void settle(long claimId, List<Outcome> outcomes, long claimedAt) {
        Instant now = clock.instant();
        List<Task> done = new ArrayList<>();
        List<FailedTask> failures = new ArrayList<>();
        List<Long> notStarted = new ArrayList<>();
        for (Outcome o : outcomes) {
            Task t = o.task();
            if (o instanceof Succeeded) {
                done.add(t);
            } else if (o instanceof Failed f) {
                if (f.timedOut()) {
                    metrics.handlerTimedOut(t.type());
                }
                if (!f.retryable() || t.lastAttempt()) {
                    LOG.warn("task {} ({}) FAILED after {} attempts: {}", t.id(), t.type(), t.attempts(), f.error());
                    failures.add(new FailedTask(t, Failure.permanent(t.id(), f.error())));
                } else {
                    failures.add(new FailedTask(
                            t, Failure.retry(t.id(), f.error(), now.plus(config.backoffAfter(t.attempts())))));
                }
            } else if (o instanceof NotStarted) {
                notStarted.add(t.id());
            }
        }
        Settlement s = new Settlement(claimId, done, failures, notStarted, claimedAt);
        try {
            s.apply();
        } catch (PidPoolException e) {
            metrics.storeError("settle");
            unsettled.add(s);
            throw e;
        }
    }

    /** A claim whose outcome is unknown: release whatever of {@code ids} it won, before the next claim. */
    void giveBack(long claimId, List<Long> ids, long claimedAt) {
        unsettled.add(new Settlement(claimId, List.of(), List.of(), ids, claimedAt));
    }

    /** Retries the settlements the store refused earlier; throws while it still refuses. */
    void retryPending() {
        for (Iterator<Settlement> it = unsettled.iterator(); it.hasNext(); ) {
            Settlement s = it.next();
            if (ticker.read() - s.claimedAt > config.lease().multipliedBy(2).toNanos()) {
                LOG.warn(
                        "worker {}: dropping a settlement of claim {} after two leases; the reaper returns its tasks",
                        memberId,
                        s.claimId);
                it.remove();
                continue;
            }
            try {
                s.apply();
            } catch (PidPoolException e) {
                metrics.storeError("settle");
                throw e;
            }
            it.remove();
        }
    }

    boolean hasUnsettled() {
        return !unsettled.isEmpty();
    }

    private record FailedTask(Task task, Failure failure) {}

    /** The outcome of one claimed batch still to be written; each step is applied at most once. */
    private final class Settlement {
        final long claimId;
        final List<Task> done;
        final List<FailedTask> failures;
        final List<Long> notStarted;
        final long claimedAt;
        boolean completed;
        boolean failed;
        boolean released;

        Settlement(long claimId, List<Task> done, List<FailedTask> failures, List<Long> notStarted, long claimedAt) {
            this.claimId = claimId;
            this.done = done;
            this.failures = failures;
            this.notStarted = notStarted;
            this.claimedAt = claimedAt;
        }

        void apply() {
            Instant now = clock.instant();
            if (!completed) {
                int n = store.complete(claimId, done.stream().map(Task::id).toList(), now);
                completed = true;
                Map<String, Integer> byType = new LinkedHashMap<>();
                done.forEach(t -> byType.merge(t.type(), 1, Integer::sum));
                byType.forEach(metrics::tasksDone);
                if (n < done.size()) {
                    metrics.settlementsLost(done.size() - n);
                }
            }
            if (!failed) {
                int n = store.fail(
                        claimId, failures.stream().map(FailedTask::failure).toList(), now);
                failed = true;
                for (FailedTask f : failures) {
                    if (f.failure().retryAt().isPresent()) {
                        metrics.taskRetried(f.task().type());
                    } else {
                        metrics.taskFailed(f.task().type());
                    }
                }
                if (n < failures.size()) {
                    metrics.settlementsLost(failures.size() - n);
                }
            }
            if (!released) {
                store.release(claimId, notStarted, now);
                released = true;
            }
        }
    }
}
