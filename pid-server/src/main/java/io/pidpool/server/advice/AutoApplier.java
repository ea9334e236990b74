package io.pidpool.server.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.ModuleProjection;
import io.pidpool.core.advice.Recommendation;
import io.pidpool.core.advice.Recommendations;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import io.pidpool.server.leader.BatchService;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies recommendations without an operator ({@code advice.autoApply}), as MIGRATE batches through
 * the operators' own path ({@link BatchService#submit}: recorded, audited, applied by the leader
 * exactly once).
 *
 * <ul>
 *   <li><b>Throttled:</b> at most {@code maxMoves} PIDs per {@code interval} (a fixed window that
 *       starts with the first move after the previous window ended). A run that has more takes a
 *       prefix of the recommendations at move granularity, which the recommender promises never
 *       raises the projected cost.
 *   <li><b>One at a time:</b> nothing is submitted while the previous batch is not final, so the next
 *       report sees its moves before more are decided.
 *   <li><b>Audited:</b> the batch, its {@code batch.accepted} row and an {@code advice.applied} row
 *       (actor {@value #ACTOR}, target the batch id, detail the explanations and the cost delta) are
 *       written in one transaction.
 *   <li><b>Not on estimated usage</b> of a module involved, unless allowed (docs/advice.md §1).
 * </ul>
 *
 * <p>Concurrency: confined to the alert service's thread. The throttle lives in memory: a new leader
 * starts a fresh window.
 */
final class AutoApplier {
    private static final Logger log = LoggerFactory.getLogger(AutoApplier.class);
    static final String ACTOR = "advice-auto-apply";

    private final BatchService batches;
    private final Repositories repos;
    private final LongSupplier ids;
    private final Clock clock;
    private final int maxMoves;
    private final Duration interval;
    private final boolean onEstimatedUsage;

    private Instant windowStart;
    private int movedInWindow;
    private BatchId pending;

    AutoApplier(
            BatchService batches,
            Repositories repos,
            LongSupplier ids,
            Clock clock,
            int maxMoves,
            Duration interval,
            boolean onEstimatedUsage) {
        this.batches = requireNonNull(batches, "batches");
        this.repos = requireNonNull(repos, "repos");
        this.ids = requireNonNull(ids, "ids");
        this.clock = requireNonNull(clock, "clock");
        requireArgument(
                maxMoves >= 1 && maxMoves <= Operation.MAX_PIDS,
                "maxMoves",
                "must be within 1..%d",
                Operation.MAX_PIDS);
        this.maxMoves = maxMoves;
        this.interval = requireNonNull(interval, "interval");
        this.onEstimatedUsage = onEstimatedUsage;
    }

    /** Submits (a throttled prefix of) {@code recommendations}; returns the batch, if one was submitted. */
    Optional<BatchId> apply(Recommendations recommendations, UsageReport report) {
        if (recommendations.isEmpty()) {
            return Optional.empty();
        }
        if (pending != null) {
            Optional<BatchRecord> previous = batches.get(pending);
            if (previous.isPresent() && !previous.get().status().isFinal()) {
                log.debug(
                        "auto-apply waits for batch {} ({})",
                        pending,
                        previous.get().status());
                return Optional.empty();
            }
            pending = null;
        }
        if (!onEstimatedUsage) {
            for (Recommendation r : recommendations.recommendations()) {
                for (ModuleKey module : List.of(r.source().module(), r.target().module())) {
                    if (report.module(module)
                            .map(ModuleProjection::usageEstimated)
                            .orElse(true)) {
                        log.info(
                                "auto-apply skipped: usage of {} is estimated from its current PIDs"
                                        + " (advice.autoApply.onEstimatedUsage is off)",
                                module);
                        return Optional.empty();
                    }
                }
            }
        }
        Instant now = clock.instant();
        if (windowStart == null || !now.isBefore(windowStart.plus(interval))) {
            windowStart = now;
            movedInWindow = 0;
        }
        int budget = maxMoves - movedInWindow;
        if (budget <= 0) {
            log.debug("auto-apply throttled: {} moves since {}", movedInWindow, windowStart);
            return Optional.empty();
        }
        List<Operation.Migrate<String>> migrations = recommendations.firstMoves(budget);
        List<Operation<String>> operations = List.copyOf(migrations);
        int moves = migrations.stream().mapToInt(op -> op.pidIds().size()).sum();
        StringBuilder detail = new StringBuilder();
        for (int i = 0; i < migrations.size(); i++) {
            Recommendation r = recommendations.recommendations().get(i);
            int taken = migrations.get(i).pidIds().size();
            detail.append(
                            taken < r.pidIds().size()
                                    ? "(throttled: " + taken + " of "
                                            + r.pidIds().size() + " PIDs) "
                                    : "")
                    .append(r.explanation())
                    .append('\n');
        }
        String summary = "auto-applied " + moves + " of " + recommendations.moves() + " recommended moves; projected"
                + " overage cost " + recommendations.costBefore().toPlainString() + " before all recommendations.\n"
                + detail;
        BatchId id = repos.transactor().inTransaction(() -> {
            BatchId batch = batches.submit(operations, ACTOR);
            repos.audit()
                    .append(new AuditEntry(ids.getAsLong(), now, ACTOR, "advice.applied", batch.toString(), summary));
            return batch;
        });
        movedInWindow += moves;
        pending = id;
        log.info("auto-apply submitted batch {}: {} PID moves ({} in this window)", id, moves, movedInWindow);
        return Optional.of(id);
    }
}
