package io.pidpool.server.leader;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.protocol.NotifySignal;
import io.pidpool.server.zk.EpochFence;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.TreeWatcher;
import io.pidpool.server.zk.WriteResult;
import io.pidpool.server.zk.ZkSupport;
import io.pidpool.server.zk.ZkWrite;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One leadership term of one node: from winning the election to losing it (or being fenced off).
 *
 * <p>On {@link #begin()}: bump {@code /epoch} (remembering the version), raise the database's leader
 * epoch to it ({@link LeaderDatabase#beginTerm}), {@code sync()}, load the
 * database view, scan {@code /modules} into the ZooKeeper view unless the node's watcher proves that
 * view current as of a barrier after the sync ({@link TreeWatcher#proveCurrent}; the scan is what
 * happens on any doubt), and only then start serving:
 * reconcile (delete first, then add), apply pending batches, and keep doing both on events and on a
 * schedule. Every ZooKeeper write goes through this term's {@link FencedWriter}, every database write
 * checks the term's epoch in its own transaction; a fenced write of either kind ends the term.
 *
 * <p>Concurrency: every method runs on the node's serial executor (the watchers, timers and write
 * completions only enqueue tasks there), so the term's state, the {@link ZkView}, the {@link DbView}
 * and the {@link TermBookkeeping} are never touched by two threads. Blocking calls (the election steps,
 * database calls) block that executor, which is what keeps decisions in order.
 */
final class LeaderTerm {
    private static final Logger log = LoggerFactory.getLogger(LeaderTerm.class);
    private static final int BATCHES_PER_ROUND = 16;
    private static final int NOTIFY_ATTEMPTS = 3;
    private static final Duration TOMBSTONE_AGE = Duration.ofMinutes(10);
    /** The periodic database reload waits at least this many times its own cost. */
    private static final int RELOAD_COST_FACTOR = 20;
    /**
     * Account versions whose changes stay listed for followers' warm copies (WarmAccounts): a follower
     * further behind than this loads every account when it is elected.
     */
    private static final long KEPT_ACCOUNT_VERSIONS = 10_000;
    /** A failed rescan is tried again this much later while writes are in doubt (they wait for it). */
    private static final long RESCAN_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Assignment rows written per pass at most (see writeDatabase). */
    private static final int ROWS_PER_PASS = 5_000;

    private final NodeContext ctx;
    private final Consumer<PidPoolException> onFenced;
    private final Reconciler reconciler;
    private final BatchApplier batches;
    private final DbView db = new DbView();
    private final TermBookkeeping state = new TermBookkeeping();
    private final List<ScheduledFuture<?>> timers = new ArrayList<>();
    /**
     * Measures what passes cost (the pacing below): the serial thread's CPU time, not the wall
     * clock, so that preemption by other processes and GC pauses do not space passes out.
     */
    private final io.pidpool.core.port.Ticker work;
    /** Outcomes of sent intents, queued by the writer's completions for {@link #settleOutcomes}. */
    private final Queue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
    /** Whether a {@link #settleOutcomes} task is scheduled and has not started draining yet. */
    private final AtomicBoolean settling = new AtomicBoolean();

    private FenceToken token;
    private FencedWriter writer;
    private PlacementPolicy policy;
    private Duration grace;
    private boolean serving;
    private boolean suspended;
    private boolean closed;
    /** When passes run and what each covers (debounce, full passes, placement spacing by cost). */
    private final PassPacing pacing;

    private boolean rescanRunning;
    private boolean rescanAgain;
    /** Whether a retry of a failed rescan is scheduled ({@link #retryRescan}). */
    private boolean rescanRetry;
    /** Whether {@code /notify} existed when last seen: chooses create or setData for DEALED. */
    private boolean notifyExists;

    private long passes;
    private long fullPasses;
    private long placements;
    private long lastLoadNanos;
    private long lastLoadCostNanos;
    /** Whether the term started from the watcher's view (proven current) or scanned, and why. */
    private TreeFollower.Proof viewProof;
    /** Where this term's accounts came from (for the log line of the term start). */
    private String accountsSource = "";
    /** Whether {@link TermBookkeeping#rows()} holds the stored rows yet (a new term reads them after its first pass). */
    private boolean rowsLoaded;

    /** @param onFenced runs on the serial executor when this term's writes are refused */
    LeaderTerm(NodeContext ctx, Consumer<PidPoolException> onFenced) {
        this(ctx, onFenced, ThreadCpuTicker.orElse(ctx.ticker()));
    }

    /** @param work the clock that measures what a pass cost on the serial thread */
    LeaderTerm(NodeContext ctx, Consumer<PidPoolException> onFenced, io.pidpool.core.port.Ticker work) {
        this.ctx = ctx;
        this.onFenced = onFenced;
        this.work = work;
        this.pacing = new PassPacing(
                (task, delay) -> ctx.serial().schedule(task, delay, TimeUnit.NANOSECONDS),
                () -> guarded(this::runPass));
        this.reconciler = new Reconciler(ctx.layout(), ctx.settings(), ctx.clock());
        this.batches = new BatchApplier(
                ctx.repositories(), ctx.batchHook(), ctx.quota().resetLog(), ctx.clock());
    }

    /** Runs the election steps; throws if any fails (the caller then gives leadership up). */
    void begin() {
        long t0 = System.nanoTime();
        ctx.view().trackChanges(true);
        // above the database's epoch too (a ZooKeeper that lost /epoch must not restart below it), and
        // then the database's epoch raised to ours: from here a deposed leader's transactions fail, and
        // one that checked the epoch before is committed before this returns
        token = EpochFence.bump(ctx.client(), ctx.layout().epoch(), ctx.store().leaderEpoch());
        ctx.store().beginTerm(token.epoch());
        ctx.quota().termBegan(token.epoch()); // Redis limits: fenced at this epoch before the first write
        writer = new FencedWriter(
                () -> ZkSupport.zooKeeper(ctx.client()),
                ctx.layout().namespace(),
                ctx.layout().epoch(),
                token,
                ctx.settings().maxOpsPerMulti(),
                ctx.settings().maxInFlightMultis(),
                ctx.acl(),
                cause -> ctx.serial().execute(() -> fenced(cause)));
        Duration negotiated = ZkSupport.negotiatedSessionTimeout(ctx.client());
        grace = ctx.settings().graceFor(negotiated);
        policy = ctx.placement().apply(grace);
        ZkSupport.await(ZkSupport.sync(ctx.client(), "/"), ctx.settings().zkTimeout(), "sync");
        long t1 = System.nanoTime();
        // the watcher has followed /modules all along: if it proves the view current as of a barrier
        // after this sync (TreeWatcher.proveCurrent, docs/leader.md §2a), the scan would add nothing
        viewProof = ctx.viewProof().apply(ctx.settings().zkTimeout());
        long tp = System.nanoTime();
        // the scan is asynchronous (read multi-ops, a level's requests all in flight): it runs while
        // this thread loads the database, instead of after it
        var scanning =
                viewProof.current() ? null : ctx.scanner().scan(ctx.layout().modules(), 3);
        // the assignment rows are not needed to serve: they are read after the first pass
        loadAccounts();
        long t2 = System.nanoTime();
        List<NodeEvent> scan = scanning == null
                ? List.of()
                : ZkSupport.await(scanning, ctx.settings().zkTimeout(), "scan");
        long t3 = System.nanoTime();
        scan.forEach(ctx.view()::replay);
        long t4 = System.nanoTime();
        serving = true;
        log.info(
                "{} leads with epoch {} (session timeout {}, grace {}, {} PIDs, {} nodes; bump+sync {} ms, "
                        + "proof {} ms, database {} ms ({}), rest of the scan {} ms, replay {} ms; {})",
                ctx.nodeId(),
                token.epoch().value(),
                negotiated,
                grace,
                db.pids().size(),
                ctx.view().size(),
                (t1 - t0) / 1_000_000,
                (tp - t1) / 1_000_000,
                (t2 - tp) / 1_000_000,
                accountsSource,
                (t3 - t2) / 1_000_000,
                (t4 - t3) / 1_000_000,
                viewProof.current()
                        ? String.format("view proven current at zxid 0x%x, scan skipped", viewProof.zxid())
                        : "scan: " + viewProof.reason());
        notifyExists = exists(ctx.layout().notifyNode());
        schedule(ctx.settings().reconcileInterval(), this::reload);
        schedule(ctx.settings().rescanInterval(), this::rescan);
        schedule(ctx.settings().batchPollInterval(), this::pollBatches);
        schedule(ctx.quotaReconcileInterval(), this::reconcileQuota);
        long t5 = System.nanoTime();
        runPass();
        log.info("{}: first pass {} ms", ctx.nodeId(), (System.nanoTime() - t5) / 1_000_000);
        // after serving: the rows (then a full pass diffs them) and every quota limit, which a new
        // leader provisions once (on QuotaSync's thread; Redis may be down)
        ctx.serial()
                .execute(() -> guarded(() -> {
                    loadRows();
                    reconcileQuota();
                    requestPass();
                }));
        // not inline: a batch row locked by a deposed leader's open transaction must not fail the election
        ctx.serial().execute(() -> guarded(this::pollBatches));
    }

    private boolean exists(String path) {
        try {
            return ctx.client().checkExists().forPath(path) != null;
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not read " + path, e);
        }
    }

    /**
     * Applies unfinished batches, oldest first (woken by {@code /notify}, and on a schedule because
     * the notification may be missed). Each is applied exactly once (see {@link BatchApplier}).
     */
    void pollBatches() {
        if (!serving()) {
            return;
        }
        List<BatchRecord> unfinished = ctx.repositories().operations().findUnfinished(BATCHES_PER_ROUND);
        for (BatchRecord batch : unfinished) {
            if (!serving()) {
                return;
            }
            // every log line while the batch is handled carries its id (MDC "batchId", logback.xml)
            try (var mdc = org.slf4j.MDC.putCloseable("batchId", batch.id().toString())) {
                Optional<BatchApplier.Applied> applied = batches.apply(batch.id(), token.epoch());
                if (applied.isEmpty()) {
                    log.info("batch {} was already applied", batch.id());
                    continue;
                }
                provisionQuota(applied.get());
                applied.get().changes().forEach(db::replay);
                pacing.requestFull(); // the database view changed
                log.info(
                        "applied batch {} ({}): {}",
                        batch.id(),
                        applied.get().batch().status(),
                        applied.get().batch().results());
                notifyDealed(batch.id());
            }
            requestPass();
        }
        if (unfinished.size() == BATCHES_PER_ROUND) {
            ctx.serial().execute(() -> guarded(this::pollBatches));
        }
    }

    /**
     * After the commit: the limits the batch changed (ADD, UPDATE: monthly quota + overage; DELETE: 0;
     * a MIGRATE or an UPDATE that keeps the limit: nothing) and its resets go to the quota ledger. If
     * Redis is down they wait in {@link QuotaSync}, and the periodic reconciliation repairs limits
     * even if this process dies first.
     */
    private void provisionQuota(BatchApplier.Applied applied) {
        Map<String, Long> limits = new LinkedHashMap<>();
        for (DbChange change : applied.changes()) {
            if (change instanceof DbChange.PidPut put) {
                PidRecord before = db.pid(put.pid().id());
                if (before == null || before.hardLimit() != put.pid().hardLimit()) {
                    limits.put(put.pid().id(), put.pid().hardLimit());
                }
            } else if (change instanceof DbChange.PidRemoved removed) {
                limits.put(removed.pidId(), 0L);
            }
        }
        ctx.quota()
                .committed(
                        limits,
                        applied.quotaResets(),
                        applied.recordedResets(),
                        ctx.clock().instant());
    }

    /** Hands the database view's limits to {@link QuotaSync}, which writes only what Redis has wrong. */
    void reconcileQuota() {
        if (closed || token == null) {
            return;
        }
        Map<String, Long> limits = new HashMap<>(db.pids().size() * 2);
        db.pids().forEach((id, account) -> limits.put(id, account.hardLimit()));
        ctx.quota().reconcile(limits);
    }

    /**
     * Writes {@code DEALED|id} to {@code /notify} with create-or-set semantics: {@link #notifyExists}
     * is only a guess (a follower may create the node after the term looked, or someone may delete
     * it), so a create that meets NODEEXISTS is sent again at once as a setData, and a setData that
     * meets NONODE as a create. Waiters on every server are woken by this write; losing it would
     * leave them to their poll.
     */
    private void notifyDealed(BatchId id) {
        notifyDealed(id, notifyExists, NOTIFY_ATTEMPTS);
    }

    private void notifyDealed(BatchId id, boolean asSet, int attemptsLeft) {
        byte[] data = new NotifySignal(NotifySignal.Phase.DEALED, id).encode();
        String path = ctx.layout().notifyNode();
        ZkWrite write = asSet ? new ZkWrite.SetData(path, data, -1) : ZkWrite.persistent(path, data);
        writer.submit(List.of(write))
                .whenCompleteAsync(
                        (done, error) -> {
                            if (error == null) {
                                notifyExists = true;
                                return;
                            }
                            if (closed) {
                                return;
                            }
                            ErrorCode code = unwrap(error).code();
                            boolean wrongGuess = asSet ? code == ErrorCode.NOT_FOUND : code == ErrorCode.CONFLICT;
                            if (wrongGuess) {
                                notifyExists = !asSet;
                                if (attemptsLeft > 1) {
                                    notifyDealed(id, !asSet, attemptsLeft - 1);
                                    return;
                                }
                            }
                            // waiters poll the database too; only the wake-up is lost
                            log.info(
                                    "could not signal DEALED for batch {}: {}",
                                    id,
                                    unwrap(error).getMessage());
                        },
                        ctx.serial());
        writer.flush();
    }

    private void schedule(Duration every, Runnable task) {
        long millis = Math.max(1, every.toMillis());
        timers.add(ctx.serial().scheduleWithFixedDelay(() -> guarded(task), millis, millis, TimeUnit.MILLISECONDS));
    }

    private void guarded(Runnable task) {
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
        return token == null ? Epoch.NONE : token.epoch();
    }

    /** How the term started: the watcher's proof, or why not (null before {@link #begin()} got there). */
    TreeFollower.Proof viewProof() {
        return viewProof;
    }

    /** Where the term's accounts came from: a full load or the warm copy of which version. */
    String accountsSource() {
        return accountsSource;
    }

    FenceToken token() {
        return token;
    }

    FencedWriter writer() {
        return writer;
    }

    boolean serving() {
        return serving && !suspended && !closed;
    }

    Duration grace() {
        return grace;
    }

    DbView db() {
        return db;
    }

    TermBookkeeping state() {
        return state;
    }

    long passes() {
        return passes;
    }

    /** Something changed (a watcher event, a write completed): reconcile soon, once for a burst. */
    void requestPass() {
        if (!closed) {
            pacing.request();
        }
    }

    /**
     * Level-triggered: reload the database view, then reconcile everything. The load is skipped while
     * less than {@value #RELOAD_COST_FACTOR} times its own cost has passed since the last one (at
     * 100,000 accounts a load takes seconds: it must not occupy the leader's thread every few seconds;
     * the leader's own changes reach the view by replay anyway, so the reload only catches changes made
     * behind its back).
     */
    void reload() {
        if (!serving()) {
            return;
        }
        long now = ctx.ticker().read();
        if (now - lastLoadNanos >= RELOAD_COST_FACTOR * lastLoadCostNanos) {
            loadDatabase();
            try {
                ctx.store().pruneChanges(KEPT_ACCOUNT_VERSIONS, token.epoch());
            } catch (PidPoolException e) {
                if (e.code() == ErrorCode.FENCED) {
                    throw e;
                }
                log.debug("account change log not pruned: {}", e.getMessage());
            }
        }
        pacing.requestFull();
        runPass();
    }

    private void loadDatabase() {
        long t0 = ctx.ticker().read();
        LeaderDatabase.Snapshot snapshot = ctx.store().load();
        db.load(snapshot);
        state.replay(new TermEvent.RowsLoaded(snapshot.assignments()));
        rowsLoaded = true;
        loadCooldowns(); // stored end times: a new leader does not start them over
        lastLoadNanos = ctx.ticker().read();
        lastLoadCostNanos = lastLoadNanos - t0;
        pacing.requestFull();
    }

    /**
     * The term start's load: accounts, modules and cooldowns, not the rows (see {@link #loadRows()}).
     * The accounts come from the follower's warm copy if the store can say what changed since its
     * version (then exactly those accounts are read again, deletes included), else from a full load.
     */
    private void loadAccounts() {
        long t0 = ctx.ticker().read();
        accountsSource = "full load";
        Optional<DbView> warm = ctx.warm().take();
        Optional<AccountChanges> changes = warm.filter(w -> w.version() != AccountSnapshot.UNVERSIONED)
                .flatMap(w -> ctx.store().changesSince(w.version()));
        if (changes.isPresent()) {
            DbView proven = warm.get();
            long from = proven.version();
            proven.apply(changes.get());
            db.takeOver(proven);
            accountsSource = String.format(
                    "warm copy of version %d, now %d: %d changed, %d removed",
                    from,
                    db.version(),
                    changes.get().changed().size(),
                    changes.get().removed().size());
        } else {
            db.load(ctx.store().loadAccounts());
        }
        loadCooldowns();
        lastLoadNanos = ctx.ticker().read();
        lastLoadCostNanos = lastLoadNanos - t0;
        pacing.requestFull();
    }

    private void loadRows() {
        if (closed || rowsLoaded) {
            return;
        }
        state.replay(new TermEvent.RowsLoaded(ctx.store().loadAssignments()));
        rowsLoaded = true;
        pacing.requestFull(); // diff every row against the view
    }

    /**
     * The stored cooldowns are the source of truth for their end times: each is converted from wall
     * time to this leader's monotonic time (an end in the past ends at the next pass). A cooldown this
     * term knows but could not store is kept.
     */
    private void loadCooldowns() {
        long now = ctx.ticker().read();
        Instant wall = ctx.clock().instant();
        for (Cooldown stored : ctx.store().loadCooldowns()) {
            long left = Math.max(0, Duration.between(wall, stored.until()).toNanos());
            state.replay(new TermEvent.CooldownStarted(stored.pidId(), now + left));
        }
    }

    /** Re-reads the whole tree (sync + scan) in the background and merges it into the view. */
    void rescan() {
        if (closed) {
            return;
        }
        if (rescanRunning) {
            rescanAgain = true;
            return;
        }
        rescanRunning = true;
        long number = state.rescansStarted() + 1;
        state.replay(new TermEvent.RescanStarted(number));
        ZkSupport.sync(ctx.client(), "/")
                .thenCompose(done -> ctx.scanner().scan(ctx.layout().modules(), 3))
                .whenCompleteAsync(
                        (events, error) -> {
                            rescanRunning = false;
                            if (closed) {
                                return;
                            }
                            if (error != null) {
                                log.warn("rescan failed: {}", unwrap(error).getMessage());
                                if (state.writesInDoubt() > 0 && !rescanAgain) {
                                    // writes in doubt block their PIDs until a rescan succeeds
                                    retryRescan();
                                }
                            } else {
                                events.forEach(ctx.view()::replay);
                                ctx.view().pruneTombstones(TOMBSTONE_AGE);
                                // the view is current as of this rescan's start: writes in doubt since
                                // before it are settled (their nodes are in the view, or proven absent)
                                state.replay(new TermEvent.ViewProven(number));
                                pacing.requestFull();
                            }
                            if (rescanAgain) {
                                rescanAgain = false;
                                rescan();
                            }
                            requestPass();
                        },
                        ctx.serial());
    }

    /** Rescans again after {@link #RESCAN_RETRY_NANOS} (once at a time). */
    private void retryRescan() {
        if (rescanRetry) {
            return;
        }
        rescanRetry = true;
        ctx.serial()
                .schedule(
                        () -> guarded(() -> {
                            rescanRetry = false;
                            rescan();
                        }),
                        RESCAN_RETRY_NANOS,
                        TimeUnit.NANOSECONDS);
    }

    void runPass() {
        pacing.started();
        if (!serving()) {
            return;
        }
        passes++;
        long now = ctx.ticker().read();
        long work0 = work.read();
        java.util.Set<String> alertedBefore = state.alertKeys();
        Set<String> dirty = ctx.view().drainDirtyPids();
        PassPacing.Plan plan = pacing.plan(now, ctx.view().structureVersion());
        boolean full = plan.full();
        boolean placement = plan.placement();
        if (placement) {
            placements++;
        }
        Reconciler.Scope scope = full ? Reconciler.Scope.FULL : new Reconciler.Scope(false, dirty, placement);
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
                    policy,
                    token.epoch(),
                    grace.toNanos(),
                    now,
                    rowsLoaded ? scope : scope.withoutRows(),
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
        ctx.store().recordCooldowns(decision.cooldownStarts(), decision.cooldownEnds(), token.epoch());
        if (!decision.pidUpdates().isEmpty()) {
            ctx.store().updatePids(decision.pidUpdates(), token.epoch());
            for (PidRecord pid : decision.pidUpdates()) {
                db.replay(new DbChange.PidPut(pid));
            }
        }
        if (!rowsLoaded) {
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
            requestPass();
        }
        Set<String> removals = decision.rowRemovals();
        if (removals.size() > ROWS_PER_PASS) {
            List<String> all = List.copyOf(removals);
            all.subList(ROWS_PER_PASS, all.size()).forEach(ctx.view()::markDirty);
            removals = new LinkedHashSet<>(all.subList(0, ROWS_PER_PASS));
            requestPass();
        }
        if (!upserts.isEmpty()) {
            ctx.store().recordAssignments(upserts, token.epoch());
        }
        if (!removals.isEmpty()) {
            ctx.store().removeAssignments(removals, token.epoch());
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
        writer.submit(intent.writes()).whenComplete((results, error) -> {
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
        if (closed) {
            return;
        }
        PidPoolException failure = error == null ? null : unwrap(error);
        switch (WriteSettlement.settle(intent, results, failure, state, ctx.view(), pacing)) {
            case FENCED -> {
                return; // the writer reports it once through the fenced listener
            }
            case RESCAN -> {
                log.debug("{} failed: {}", intent, failure.getMessage());
                rescan(); // the outcome is unknown: re-read everything; the intent stays in doubt until then
            }
            case REFRESH -> {
                log.debug("{} failed: {}", intent, failure.getMessage());
                refresh(intent); // the view was wrong about these nodes: re-read just them
            }
            case NONE -> {}
        }
        requestPass();
    }

    /** Re-reads the nodes a failed write touched, and their parents (whose listings prove a child gone). */
    private void refresh(Intent intent) {
        Set<String> paths = new LinkedHashSet<>();
        for (ZkWrite write : intent.writes()) {
            paths.add(write.path());
            int slash = write.path().lastIndexOf('/');
            if (slash > 0) {
                paths.add(write.path().substring(0, slash));
            }
        }
        ctx.scanner()
                .read(List.copyOf(paths))
                .whenCompleteAsync(
                        (events, error) -> {
                            if (closed) {
                                return;
                            }
                            if (error != null) {
                                log.debug(
                                        "refresh failed ({}), rescanning",
                                        unwrap(error).getMessage());
                                rescan();
                                return;
                            }
                            events.forEach(ctx.view()::replay);
                            if (intent.pid() != null) {
                                ctx.view().markDirty(intent.pid());
                            }
                            pacing.requestPlacement();
                            requestPass();
                        },
                        ctx.serial());
    }

    long fullPasses() {
        return fullPasses;
    }

    long placements() {
        return placements;
    }

    private static PidPoolException unwrap(Throwable error) {
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
        if (writer != null) {
            writer.pause();
        }
    }

    /** The connection is back with the same session: re-read everything, then go on. */
    void resume() {
        if (!suspended) {
            return;
        }
        suspended = false;
        if (writer != null) {
            writer.resume();
        }
        rescan();
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
        if (writer != null) {
            writer.close();
        }
        log.info("{} ends its term (epoch {})", ctx.nodeId(), epoch().value());
    }
}
