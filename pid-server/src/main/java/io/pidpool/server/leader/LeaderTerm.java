package io.pidpool.server.leader;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Ticker;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.FencedWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One leadership term of one node: from winning the election to losing it (or being fenced off).
 *
 * <p>On {@link #begin()} the {@link TermStart} runs (bump {@code /epoch}, raise the database's leader
 * epoch, {@code sync()}, prove the watched view current or scan {@code /modules}, load the accounts),
 * and only then does the term serve: reconcile (delete first, then add), apply pending batches, and
 * keep doing both on events and on a schedule. Its parts: {@link PassRunner} (the passes, their writes
 * and outcomes), {@link PassPacing} (when a pass runs and what it covers), {@link ViewRereads}
 * (rescans and refreshes of the view), {@link TermLoader} (database loads) and {@link BatchIntake}
 * (operator batches). Every ZooKeeper write goes through this term's {@link FencedWriter}, every
 * database write checks the term's epoch in its own transaction; a fenced write of either kind ends
 * the term.
 *
 * <p>Concurrency: every method runs on the node's serial executor (the watchers, timers and write
 * completions only enqueue tasks there), so the term's state, the {@link ZkView}, the {@link DbView}
 * and the {@link TermBookkeeping} are never touched by two threads. Blocking calls (the election steps,
 * database calls) block that executor, which is what keeps decisions in order.
 */
final class LeaderTerm {
    private static final Logger log = LoggerFactory.getLogger(LeaderTerm.class);

    private final NodeContext ctx;
    private final Consumer<PidPoolException> onFenced;
    private final DbView db = new DbView();
    private final TermBookkeeping state = new TermBookkeeping();
    private final List<ScheduledFuture<?>> timers = new ArrayList<>();
    /** When passes run and what each covers (debounce, full passes, placement spacing by cost). */
    private final PassPacing pacing;

    private final TermLoader loader;
    private final TermStart start;
    private final ViewRereads rereads;
    private final PassRunner passes;
    private final BatchIntake batches;

    private boolean serving;
    private boolean suspended;
    private boolean closed;

    /** @param onFenced runs on the serial executor when this term's writes are refused */
    LeaderTerm(NodeContext ctx, Consumer<PidPoolException> onFenced) {
        this(ctx, onFenced, ThreadCpuTicker.orElse(ctx.ticker()));
    }

    /** @param work the clock that measures what a pass cost on the serial thread */
    LeaderTerm(NodeContext ctx, Consumer<PidPoolException> onFenced, Ticker work) {
        this.ctx = ctx;
        this.onFenced = onFenced;
        this.pacing = new PassPacing(
                (task, delay) -> ctx.serial().schedule(task, delay, TimeUnit.NANOSECONDS),
                () -> guarded(this::runPass));
        this.loader = new TermLoader(ctx.store(), ctx.warm()::take, db, state, ctx.ticker(), ctx.clock(), pacing);
        this.start = new TermStart(
                ctx.layout(),
                ctx.settings(),
                ctx.store(),
                ctx.view(),
                loader,
                ctx.placement(),
                new CuratorTermStartPort(ctx, this::fenced),
                System::nanoTime,
                () -> closed);
        this.rereads = new ViewRereads(ctx, state, pacing, this);
        this.passes = new PassRunner(ctx, this, db, state, pacing, loader, rereads, work);
        this.batches = new BatchIntake(ctx, db, pacing, this);
    }

    /** Runs the election steps; throws if any fails (the caller then gives leadership up). */
    void begin() {
        ctx.view().trackChanges(true);
        TermStart.await(start.run()); // blocking: the start holds the serial executor (docs/leader.md §2)
        serving = true;
        TermStart.Timings took = start.timings();
        TreeFollower.Proof proof = start.proof();
        log.info(
                "{} leads with epoch {} (session timeout {}, grace {}, {} PIDs, {} nodes; bump+sync {} ms, "
                        + "proof {} ms, database {} ms ({}), rest of the scan {} ms, replay {} ms; {})",
                ctx.nodeId(),
                epoch().value(),
                start.negotiatedSessionTimeout(),
                grace(),
                db.pids().size(),
                ctx.view().size(),
                took.bumpAndSync() / 1_000_000,
                took.proof() / 1_000_000,
                took.database() / 1_000_000,
                loader.accountsSource(),
                took.restOfScan() / 1_000_000,
                took.replay() / 1_000_000,
                proof.current()
                        ? String.format("view proven current at zxid 0x%x, scan skipped", proof.zxid())
                        : "scan: " + proof.reason());
        batches.begin();
        schedule(ctx.settings().reconcileInterval(), this::reload);
        schedule(ctx.settings().rescanInterval(), rereads::rescan);
        schedule(ctx.settings().batchPollInterval(), this::pollBatches);
        schedule(ctx.quotaReconcileInterval(), this::reconcileQuota);
        long t5 = System.nanoTime();
        runPass();
        log.info("{}: first pass {} ms", ctx.nodeId(), (System.nanoTime() - t5) / 1_000_000);
        // after serving: the rows (then a full pass diffs them) and every quota limit, which a new
        // leader provisions once (on QuotaSync's thread; Redis may be down)
        ctx.serial()
                .execute(() -> guarded(() -> {
                    loader.loadRows();
                    reconcileQuota();
                    requestPass();
                }));
        // not inline: a batch row locked by a deposed leader's open transaction must not fail the election
        ctx.serial().execute(() -> guarded(this::pollBatches));
    }

    /** Applies unfinished batches ({@link BatchIntake#poll}): woken by {@code /notify}, and on a schedule. */
    void pollBatches() {
        batches.poll(null);
    }

    /** {@link #pollBatches()} right after this server recorded {@code batch} (not read back if alone). */
    void pollBatches(BatchRecord batch) {
        batches.poll(batch);
    }

    /** Hands the database view's limits to {@link QuotaSync}, which writes only what Redis has wrong. */
    void reconcileQuota() {
        if (closed || token() == null) {
            return;
        }
        Map<String, Long> limits = new HashMap<>(db.pids().size() * 2);
        db.pids().forEach((id, account) -> limits.put(id, account.hardLimit()));
        ctx.quota().reconcile(limits);
    }

    private void schedule(Duration every, Runnable task) {
        long millis = Math.max(1, every.toMillis());
        timers.add(ctx.serial().scheduleWithFixedDelay(() -> guarded(task), millis, millis, TimeUnit.MILLISECONDS));
    }

    /** Runs one of the term's tasks: not once the term ended; a fenced write ends the term. */
    void guarded(Runnable task) {
        if (closed) {
            return;
        }
        try {
            task.run();
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.FENCED) {
                fenced(e);
            } else {
                log.warn("leader task failed: {}", e.getMessage());
            }
        } catch (RuntimeException e) {
            log.error("leader task failed", e);
        }
    }

    Epoch epoch() {
        return token() == null ? Epoch.NONE : token().epoch();
    }

    /** How the term started: the watcher's proof, or why not (null before {@link #begin()} got there). */
    TreeFollower.Proof viewProof() {
        return start.proof();
    }

    /** Where the term's accounts came from: a full load or the warm copy of which version. */
    String accountsSource() {
        return loader.accountsSource();
    }

    FenceToken token() {
        return start.token();
    }

    FencedWriter writer() {
        return start.writer();
    }

    PlacementPolicy policy() {
        return start.policy();
    }

    boolean serving() {
        return serving && !suspended && !closed;
    }

    boolean isClosed() {
        return closed;
    }

    Duration grace() {
        return start.grace();
    }

    DbView db() {
        return db;
    }

    TermBookkeeping state() {
        return state;
    }

    long passes() {
        return passes.passes();
    }

    long fullPasses() {
        return passes.fullPasses();
    }

    long placements() {
        return passes.placements();
    }

    /** Something changed (a watcher event, a write completed): reconcile soon, once for a burst. */
    void requestPass() {
        if (!closed) {
            pacing.request();
        }
    }

    /** {@link #requestPass()} for an applied batch: without the debounce ({@link PassPacing#requestNow}). */
    void requestPassNow() {
        if (!closed) {
            pacing.requestNow();
        }
    }

    /** Level-triggered: reload the database view if due ({@link TermLoader#reloadIfDue}), then reconcile all. */
    void reload() {
        if (!serving()) {
            return;
        }
        loader.reloadIfDue(epoch());
        pacing.requestFull();
        runPass();
    }

    void runPass() {
        passes.run();
    }

    static PidPoolException unwrap(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return cause instanceof PidPoolException p ? p : PidPoolException.unavailable(String.valueOf(cause), cause);
    }

    private void fenced(PidPoolException cause) {
        if (closed) {
            return;
        }
        log.warn("{} was fenced off in epoch {}: {}", ctx.nodeId(), epoch().value(), cause.getMessage());
        onFenced.accept(cause);
    }

    /** The leader's connection is SUSPENDED: stop writing (never move anything because of it). */
    void suspend() {
        suspended = true;
        if (writer() != null) {
            writer().pause();
        }
    }

    /** The connection is back with the same session: re-read everything, then go on. */
    void resume() {
        if (!suspended) {
            return;
        }
        suspended = false;
        if (writer() != null) {
            writer().resume();
        }
        rereads.rescan();
    }

    void close() {
        if (closed) {
            return;
        }
        closed = true;
        serving = false;
        pacing.close();
        timers.forEach(t -> t.cancel(false));
        ctx.view().trackChanges(false);
        ctx.quota().termEnded();
        if (writer() != null) {
            writer().close();
        }
        log.info("{} ends its term (epoch {})", ctx.nodeId(), epoch().value());
    }
}
