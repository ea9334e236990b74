package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.Ticker;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.WriteResult;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a term's reconciliation passes: asks {@link PassPacing} what a pass covers, decides it
 * ({@link Reconciler#decide}) while streaming each decided write to the term's {@link FencedWriter},
 * reports the pass's alerts, writes its database changes (cooldowns, statuses, at most
 * {@value #ROWS_PER_PASS} assignment rows), and settles the writes' outcomes in bursts
 * ({@link WriteSettlement}), asking {@link ViewRereads} for the re-reads a failure calls for.
 *
 * <p>Concurrency: the term's serial executor; the writer's completions only queue outcomes and
 * enqueue one settling task per burst there.
 */
final class PassRunner {
    /** The term's lines keep one logger name, whichever part of the term writes them. */
    private static final Logger log = LoggerFactory.getLogger(LeaderTerm.class);
    /** Assignment rows written per pass at most (see writeDatabase). */
    private static final int ROWS_PER_PASS = 5_000;

    private final NodeContext ctx;
    private final LeaderTerm term;
    private final DbView db;
    private final TermBookkeeping state;
    private final PassPacing pacing;
    private final TermLoader loader;
    private final ViewRereads rereads;
    private final Reconciler reconciler;
    /**
     * Measures what passes cost (the pacing): the serial thread's CPU time, not the wall clock, so
     * that preemption by other processes and GC pauses do not space passes out.
     */
    private final Ticker work;
    /** Outcomes of sent intents, queued by the writer's completions for {@link #settleOutcomes}. */
    private final Queue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
    /** Whether a {@link #settleOutcomes} task is scheduled and has not started draining yet. */
    private final AtomicBoolean settling = new AtomicBoolean();

    private long passes;
    private long fullPasses;
    private long placements;

    PassRunner(
            NodeContext ctx,
            LeaderTerm term,
            DbView db,
            TermBookkeeping state,
            PassPacing pacing,
            TermLoader loader,
            ViewRereads rereads,
            Ticker work) {
        this.ctx = ctx;
        this.term = term;
        this.db = db;
        this.state = state;
        this.pacing = pacing;
        this.loader = loader;
        this.rereads = rereads;
        this.reconciler = new Reconciler(ctx.layout(), ctx.settings(), ctx.clock());
        this.work = work;
    }

    long passes() {
        return passes;
    }

    long fullPasses() {
        return fullPasses;
    }

    long placements() {
        return placements;
    }

    void run() {
        pacing.started();
        if (!term.serving()) {
            return;
        }
        passes++;
        long now = ctx.ticker().read();
        long work0 = work.read();
        Set<String> alertedBefore = state.alertKeys();
        Set<String> dirty = ctx.view().drainDirtyPids();
        PassPacing.Plan plan = pacing.plan(now, ctx.view().structureVersion());
        boolean full = plan.full();
        boolean placement = plan.placement();
        if (placement) {
            placements++;
        }
        Reconciler.Scope scope = full ? Reconciler.Scope.FULL : new Reconciler.Scope(false, dirty, placement);
        FencedWriter writer = term.writer();
        // Streamed: each intent goes to the writer as soon as the pass has decided it (a full multi-op
        // leaves at once), so ZooKeeper and the instances work on the first adds while this thread still
        // decides the rest (a term's first pass at 100,000 PIDs decides for a second). The bookkeeping
        // learns of them after the pass, so that the pass decides against the state it started with;
        // their outcomes come back through this serial executor, hence after that.
        List<Intent> sent = new ArrayList<>();
        Reconciler.Decision decision;
        try {
            decision = reconciler.decide(
                    ctx.view(),
                    db,
                    state,
                    term.policy(),
                    term.epoch(),
                    term.grace().toNanos(),
                    now,
                    loader.rowsLoaded() ? scope : scope.withoutRows(),
                    intent -> {
                        sent.add(intent);
                        send(intent);
                    });
        } finally {
            // also if the pass failed half-way: what was sent is in flight, and leaves now
            issued(sent);
            writer.flush();
        }
        long decided = ctx.ticker().read();
        long decideCost = work.read() - work0;
        if (full) {
            fullPasses++;
        }
        decision.alerts().forEach(ctx.alerts()::alert);
        alertedBefore.stream().filter(key -> !state.alerted(key)).forEach(ctx.alerts()::cleared);
        long flushed = ctx.ticker().read();
        try {
            writeDatabase(decision);
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.FENCED) {
                throw e;
            }
            // the rows and statuses are diffed again by the next pass
            log.warn("database update of this pass failed: {}", e.getMessage());
        }
        pacing.finished(plan, decideCost, work.read() - work0);
        if (log.isDebugEnabled()) {
            log.debug(
                    "pass {} ({}{}, {} dirty): decide {} ms, {} intents sent after {} ms, rows {} ms",
                    passes,
                    full ? "full" : "incremental",
                    placement ? ", placement" : "",
                    dirty.size(),
                    (decided - now) / 1_000_000,
                    decision.intents().size(),
                    (flushed - now) / 1_000_000,
                    (ctx.ticker().read() - flushed) / 1_000_000);
        }
    }

    private void writeDatabase(Reconciler.Decision decision) {
        // the end time first: a COOLDOWN status without it would be started over by a new leader
        ctx.store().recordCooldowns(decision.cooldownStarts(), decision.cooldownEnds(), term.epoch());
        if (!decision.pidUpdates().isEmpty()) {
            ctx.store().updatePids(decision.pidUpdates(), term.epoch());
            for (PidRecord pid : decision.pidUpdates()) {
                db.replay(new DbChange.PidPut(pid));
            }
        }
        if (!loader.rowsLoaded()) {
            return; // the term's first pass: the stored rows are read after it, then a full pass diffs them
        }
        // A new term re-stamps every row (100,000 at scale: seconds of database work). Rows are not
        // needed to serve, so at most ROWS_PER_PASS are written per pass; the others are diffed again
        // by the next (incremental) pass, and events are handled in between.
        List<Assignment> upserts = decision.rowUpserts();
        if (upserts.size() > ROWS_PER_PASS) {
            upserts.subList(ROWS_PER_PASS, upserts.size())
                    .forEach(row -> ctx.view().markDirty(row.pidId()));
            upserts = List.copyOf(upserts.subList(0, ROWS_PER_PASS));
            term.requestPass();
        }
        Set<String> removals = decision.rowRemovals();
        if (removals.size() > ROWS_PER_PASS) {
            List<String> all = List.copyOf(removals);
            all.subList(ROWS_PER_PASS, all.size()).forEach(ctx.view()::markDirty);
            removals = new LinkedHashSet<>(all.subList(0, ROWS_PER_PASS));
            term.requestPass();
        }
        if (!upserts.isEmpty()) {
            ctx.store().recordAssignments(upserts, term.epoch());
        }
        if (!removals.isEmpty()) {
            ctx.store().removeAssignments(removals, term.epoch());
        }
        if (!upserts.isEmpty() || !removals.isEmpty()) {
            state.replay(new TermEvent.RowsWritten(upserts, removals));
        }
    }

    /**
     * Hands one decided write to the writer (which sends it with the next full multi-op, or on
     * {@link FencedWriter#flush()}); its outcome comes back to the serial executor, so {@link
     * #settled} runs after the task that sent it, which records it as issued before it ends.
     *
     * <p>Outcomes are queued in the order they complete and settled by one serial task per burst (a
     * multi-op completes up to 200 units at once), not one task each: a term's first pass settles
     * 100,000 adds.
     */
    private void send(Intent intent) {
        if (log.isDebugEnabled()) {
            log.debug("{}", intent);
        }
        term.writer().submit(intent.writes()).whenComplete((results, error) -> {
            outcomes.add(new Outcome(intent, results, error));
            if (settling.compareAndSet(false, true)) {
                ctx.serial().execute(this::settleOutcomes);
            }
        });
    }

    private record Outcome(Intent intent, List<WriteResult> results, Throwable error) {}

    /** On the serial executor: settles every outcome queued so far, in order. */
    private void settleOutcomes() {
        settling.set(false); // an outcome queued from now on schedules another run
        Outcome outcome;
        while ((outcome = outcomes.poll()) != null) {
            try {
                settled(outcome.intent(), outcome.results(), outcome.error());
            } catch (RuntimeException e) {
                log.error("settling {} failed", outcome.intent(), e);
            }
        }
    }

    /** The bookkeeping's part of sending: the intents' paths and PIDs are in flight until settled. */
    private void issued(List<Intent> intents) {
        for (Intent intent : intents) {
            state.replay(new TermEvent.WriteIssued(intent));
        }
    }

    private void settled(Intent intent, List<WriteResult> results, Throwable error) {
        if (term.isClosed()) {
            return;
        }
        PidPoolException failure = error == null ? null : LeaderTerm.unwrap(error);
        switch (WriteSettlement.settle(intent, results, failure, state, ctx.view(), pacing)) {
            case FENCED -> {
                return; // the writer reports it once through the fenced listener
            }
            case RESCAN -> {
                log.debug("{} failed: {}", intent, failure.getMessage());
                rereads.rescan(); // the outcome is unknown: re-read everything; the intent stays in doubt until then
            }
            case REFRESH -> {
                log.debug("{} failed: {}", intent, failure.getMessage());
                rereads.refresh(intent); // the view was wrong about these nodes: re-read just them
            }
            case NONE -> {}
        }
        term.requestPass();
    }
}
