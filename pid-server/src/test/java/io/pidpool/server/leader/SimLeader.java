package io.pidpool.server.leader;

import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.QuotaResetLog;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.core.sim.SimScheduler;
import io.pidpool.core.sim.SimScheduler.Proc;
import io.pidpool.core.sim.SimZooKeeper;
import io.pidpool.core.sim.SimZooKeeper.Code;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.NodeStat;
import io.pidpool.server.zk.WriteResult;
import io.pidpool.server.zk.ZkWrite;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;

/**
 * One PidPool server process on virtual time: its ZooKeeper view (the node's {@code /modules}
 * watcher), its place in the election (a leader latch on an EPHEMERAL_SEQUENTIAL node) and, while it
 * leads, one {@link Term}. The decisions are the REAL {@link Reconciler}, {@link TermBookkeeping},
 * {@link ZkView}, {@link DbView}, {@link PlannerPlacement} and {@link BatchApplier}; the term start is
 * the REAL {@link TermStart} (over {@link SimTermStartPort}) with the REAL {@link TermLoader}; the rest
 * of {@link Term} is glue that mirrors {@link LeaderTerm}'s other parts step by step (serving after the
 * start, pass running, send, settle, rescan, suspend/resume, batches), and this class mirrors
 * {@link LeaderElection}'s connection handling.
 *
 * <p>Left out: quota provisioning (Redis), warm account copies, the /notify wake-up (batches are
 * polled), the view proof at term start (a new term always scans), pass costs (a pass takes no
 * virtual time).
 *
 * <p>Concurrency: single-threaded on the {@link SimScheduler}; the proc's events are the serial
 * executor.
 */
public final class SimLeader {
    /** What the checkers want to hear from the leaders. */
    public interface Observer {
        /** A batch was applied (committed) by the leader of {@code epoch}. */
        void batchApplied(BatchId id, Epoch epoch, BatchRecord record);

        /** A write of the leader of {@code epoch} landed in the database. */
        void databaseWrite(String what, Epoch epoch);

        /** The leader of {@code epoch} read the database to start its term. */
        void termLoaded(Epoch epoch);
    }

    private static final long REJOIN_DELAY = Duration.ofSeconds(1).toNanos();
    private static final int BATCHES_PER_ROUND = 16;

    private final SimScheduler sched;
    private final SimZooKeeper zooKeeper;
    private final Proc proc;
    private final String nodeId;
    private final ZkLayout layout;
    private final LeaderSettings settings;
    private final Repositories repositories;
    private final LeaderDatabase store;
    private final Clock clock;
    private final Observer observer;
    private final long requestedTimeout;
    private SimZooKeeper.Client zk;
    private ZkView view;
    private Term term;
    private String latchPath;
    private long latchSession;
    private boolean joining;
    private boolean stopped;
    private long watchSession;

    public SimLeader(
            SimScheduler sched,
            SimZooKeeper zooKeeper,
            Proc proc,
            ZkLayout layout,
            LeaderSettings settings,
            Repositories repositories,
            Clock clock,
            long requestedTimeout,
            Observer observer) {
        this.sched = sched;
        this.zooKeeper = zooKeeper;
        this.proc = proc;
        this.nodeId = proc.name();
        this.layout = layout;
        this.settings = settings;
        this.repositories = repositories;
        this.store = new RepositoryLeaderStore(repositories);
        this.clock = clock;
        this.observer = observer;
        this.requestedTimeout = requestedTimeout;
    }

    public static LeaderSettings settings() {
        return LeaderSettings.defaults()
                .withIntervals(Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(1))
                .withFailurePolicy(Duration.ofSeconds(5), 3, Duration.ofMillis(300), Duration.ofMinutes(10))
                .withRebalanceDelay(Duration.ofSeconds(2));
    }

    public String nodeId() {
        return nodeId;
    }

    public SimZooKeeper.Client zk() {
        return zk;
    }

    /** Whether this node leads and serves now. */
    public boolean serving() {
        return term != null && term.serving();
    }

    /** The leader's raised alerts (keys), e.g. {@code signal:brake:<module>} while a brake holds. */
    public Set<String> alertKeys() {
        return term == null ? Set.of() : term.state.alertKeys();
    }

    public Epoch epoch() {
        return term == null ? Epoch.NONE : term.epoch();
    }

    /**
     * Runs the term's batch poll now, as its timer thread would: a fault schedules it to be the first
     * thing a paused leader does when it wakes, before its ZooKeeper client notices anything.
     */
    public void pollBatchesNow() {
        Term t = term;
        if (t != null) {
            t.guarded(t::pollBatches);
        }
    }

    /** (Re)starts the process: a fresh client, view and election. */
    public void start() {
        stopped = false;
        view = new ZkView(layout, sched::now);
        term = null;
        latchPath = null;
        joining = false;
        watchSession = 0;
        zk = zooKeeper.client(nodeId, proc, requestedTimeout);
        zk.onState(this::onConnectionState);
        zk.start();
    }

    /** The process dies now. */
    public void crash() {
        stopped = true;
        zk.crash();
        term = null;
    }

    // ---------------------------------------------------------------- ClusterMember's part

    private void onConnectionState(SimZooKeeper.ConnState state) {
        if (stopped) {
            return;
        }
        switch (state) {
            case SUSPENDED -> {
                if (term != null) {
                    term.suspend();
                }
            }
            case CONNECTED, RECONNECTED -> {
                watch();
                if (term != null) {
                    if (zk.sessionId() != term.token().sessionId()) {
                        stepDown("the session changed");
                    } else {
                        term.resume();
                    }
                }
                if (latchPath == null || latchSession != zk.sessionId()) {
                    latchPath = null;
                    joinElection();
                } else {
                    checkLeadership();
                }
            }
            case LOST -> {
                endTerm("ZooKeeper session lost");
                latchPath = null;
            }
        }
    }

    /** The node's /modules watcher: a persistent recursive watch and a scan on every (re)connection. */
    private void watch() {
        if (watchSession != zk.sessionId()) {
            watchSession = zk.sessionId();
            zk.addPersistentWatch(layout.modules(), this::observed);
        }
        zk.readTree(layout.modules(), (code, nodes) -> {
            if (code == Code.OK && !stopped) {
                toEvents(nodes).forEach(view::replay);
                if (term != null) {
                    term.requestPass();
                }
            }
        });
    }

    private void observed(SimZooKeeper.WatchEvent e) {
        if (stopped) {
            return;
        }
        if (e.type() == SimZooKeeper.EventType.DELETED) {
            ZkView.Entry known = view.node(e.path());
            if (known == null) {
                return;
            }
            view.replay(new NodeEvent.Removed(e.path(), known.stat()));
        } else {
            view.replay(new NodeEvent.Upsert(e.path(), e.data(), stat(e.stat())));
        }
        if (term != null) {
            term.requestPass();
        }
    }

    static NodeStat stat(SimZooKeeper.Stat st) {
        return new NodeStat(st.czxid(), st.mzxid(), st.pzxid(), st.version(), st.ephemeralOwner(), st.numChildren());
    }

    static List<NodeEvent> toEvents(List<SimZooKeeper.NodeData> nodes) {
        List<NodeEvent> events = new ArrayList<>();
        for (SimZooKeeper.NodeData n : nodes) {
            events.add(new NodeEvent.Upsert(n.path(), n.data(), stat(n.stat())));
            events.add(new NodeEvent.Listing(n.path(), n.children(), stat(n.stat())));
        }
        return events;
    }

    /**
     * Curator's LeaderLatch in protected mode: a node of this session found under the latch path
     * (a create whose reply was lost) is adopted instead of creating a second one.
     */
    private void joinElection() {
        if (joining || stopped || !zk.connected()) {
            return;
        }
        long session = zk.sessionId();
        if (latchPath != null && latchSession == session) {
            checkLeadership();
            return;
        }
        joining = true;
        String prefix = "latch-" + nodeId + "-" + Long.toHexString(session) + "-";
        zk.getChildren(layout.leader(), (code, listing) -> {
            if (code != Code.OK || zk.sessionId() != session) {
                joining = false;
                retryJoin();
                return;
            }
            for (String child : listing.children()) {
                if (child.startsWith(prefix)) {
                    joining = false;
                    latchPath = layout.leader() + "/" + child;
                    latchSession = session;
                    checkLeadership();
                    return;
                }
            }
            zk.createWithParents(
                    layout.leader() + "/" + prefix,
                    nodeId.getBytes(StandardCharsets.UTF_8),
                    SimZooKeeper.Mode.EPHEMERAL_SEQUENTIAL,
                    (c2, r) -> {
                        joining = false;
                        if (c2 == Code.OK && zk.sessionId() == session) {
                            latchPath = r.path();
                            latchSession = session;
                            checkLeadership();
                        } else {
                            retryJoin();
                        }
                    });
        });
    }

    private void retryJoin() {
        sched.after(REJOIN_DELAY, proc, nodeId + " rejoin", this::joinElection);
    }

    private static long sequence(String child) {
        return Long.parseLong(child.substring(child.length() - 10));
    }

    private void checkLeadership() {
        String mine = latchPath;
        if (mine == null || stopped) {
            return;
        }
        zk.getChildren(layout.leader(), (code, listing) -> {
            if (code != Code.OK || latchPath == null || !latchPath.equals(mine) || stopped) {
                return;
            }
            List<String> sorted = new ArrayList<>(listing.children());
            sorted.sort(Comparator.comparingLong(SimLeader::sequence));
            String name = mine.substring(mine.lastIndexOf('/') + 1);
            int index = sorted.indexOf(name);
            if (index < 0) {
                latchPath = null; // our node is gone (Curator's LeaderLatch resets)
                endTerm("latch node gone");
                joinElection();
            } else if (index == 0) {
                becomeLeader();
            } else {
                String previous = layout.leader() + "/" + sorted.get(index - 1);
                zk.getDataWatched(previous, e -> checkLeadership(), (c2, r) -> {
                    if (c2 == Code.NONODE) {
                        checkLeadership();
                    }
                });
            }
        });
    }

    private void becomeLeader() {
        if (stopped || term != null) {
            return;
        }
        term = new Term();
        term.begin();
    }

    private void endTerm(String why) {
        if (term != null) {
            sched.trace(nodeId, "ends its term (epoch " + term.epoch().value() + "): " + why);
            term.close();
            term = null;
        }
    }

    private void stepDown(String why) {
        endTerm("stepping down: " + why);
        String old = latchPath;
        latchPath = null;
        if (old != null && zk.connected()) {
            zk.delete(old, -1, (c, r) -> {});
        }
        sched.after(REJOIN_DELAY, proc, nodeId + " rejoin", () -> {
            if (!stopped && latchPath == null) {
                joinElection();
            }
        });
    }

    // ---------------------------------------------------------------- LeaderTerm's part

    /**
     * One leadership term; mirrors the rest of {@link LeaderTerm}: its start is the production
     * {@link TermStart} over {@link SimTermStartPort}, its loads the production {@link TermLoader}.
     */
    final class Term {
        private final Reconciler reconciler = new Reconciler(layout, settings, clock);
        private final BatchApplier batches = new BatchApplier(repositories, () -> {}, QuotaResetLog.none(), clock);
        private final DbView db = new DbView();
        private final TermBookkeeping state = new TermBookkeeping();
        private final ArrayDeque<Object[]> outcomes = new ArrayDeque<>();
        private final List<SimScheduler.Event> timers = new ArrayList<>();
        private boolean settling;
        private boolean serving;
        private boolean suspended;
        private boolean closed;
        /** LeaderTerm's own pacing on virtual time; a pass costs no virtual time here. */
        private final PassPacing pacing = new PassPacing(
                (task, delay) -> sched.after(delay, proc, nodeId + " pass", task), () -> guarded(this::runPass));
        /** The term's store: tells the fencing checker when the term start has read the accounts. */
        private final TermLoadWitness witness = new TermLoadWitness(store, observer::termLoaded);
        /** No warm copy: every term loads its accounts in full. */
        private final TermLoader loader =
                new TermLoader(witness, Optional::empty, db, state, sched::now, clock, pacing);

        private final TermStart start = new TermStart(
                layout,
                settings,
                witness,
                view,
                loader,
                grace -> new PlannerPlacement(
                        PlannerPolicy.defaults(grace).withRebalanceDelay(settings.rebalanceDelay())),
                new SimTermStartPort(
                        zk,
                        layout,
                        settings,
                        () -> closed,
                        cause -> sched.after(0, proc, nodeId + " fenced", () -> fenced(cause))),
                sched::now,
                () -> closed);

        private boolean rescanRunning;
        private boolean rescanAgain;
        private boolean rescanRetry;

        Epoch epoch() {
            return token() == null ? Epoch.NONE : token().epoch();
        }

        FenceToken token() {
            return start.token();
        }

        boolean serving() {
            return serving && !suspended && !closed;
        }

        /** LeaderTerm.begin: the production term start (bump, beginTerm, sync, scan, load), then serve. */
        void begin() {
            view.trackChanges(true);
            sched.trace(nodeId, "term starts: bumping " + layout.epoch());
            start.run().whenComplete((done, error) -> {
                if (closed) {
                    return;
                }
                if (error == null) {
                    serve();
                    return;
                }
                Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                if (cause instanceof PidPoolException) {
                    stepDown("election steps failed: " + cause.getMessage());
                } else {
                    // a bug, not a failed step: let it end the run, as it would have before the port
                    post("term start failed", () -> {
                        throw new IllegalStateException("term start failed", cause);
                    });
                }
            });
        }

        /** LeaderTerm.begin after the start: serve, schedule, first pass, then the rows and batches. */
        private void serve() {
            serving = true;
            sched.note(nodeId + " leads with epoch " + epoch().value() + " (grace "
                    + start.grace().toMillis() + " ms)");
            schedule(settings.reconcileInterval(), this::reload);
            schedule(settings.rescanInterval(), this::rescan);
            schedule(settings.batchPollInterval(), this::pollBatches);
            runPass();
            post(
                    "load rows",
                    () -> guarded(() -> {
                        loader.loadRows();
                        requestPass();
                    }));
            post("poll batches", () -> guarded(this::pollBatches));
        }

        private void post(String what, Runnable task) {
            sched.after(0, proc, nodeId + " " + what, task);
        }

        private void post1s(String what, Runnable task) {
            timers.add(sched.after(Duration.ofSeconds(1).toNanos(), proc, nodeId + " " + what, task));
        }

        private void schedule(Duration every, Runnable task) {
            long nanos = every.toNanos();
            Runnable[] loop = new Runnable[1];
            loop[0] = () -> {
                if (closed) {
                    return;
                }
                guarded(task);
                timers.add(sched.after(nanos, proc, nodeId + " timer", loop[0]));
            };
            timers.add(sched.after(nanos, proc, nodeId + " timer", loop[0]));
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
                    sched.trace(nodeId, "leader task failed: " + e.getMessage());
                }
            }
        }

        /** BatchIntake.poll, without the quota ledger and the /notify wake-up. */
        void pollBatches() {
            if (!serving()) {
                return;
            }
            List<BatchRecord> unfinished = repositories.operations().findUnfinished(BATCHES_PER_ROUND);
            for (BatchRecord batch : unfinished) {
                if (!serving()) {
                    return;
                }
                Optional<BatchApplier.Applied> applied = batches.apply(batch, token().epoch());
                if (applied.isEmpty()) {
                    continue;
                }
                observer.databaseWrite("apply batch " + batch.id(), token().epoch());
                observer.batchApplied(batch.id(), token().epoch(), applied.get().batch());
                applied.get().changes().forEach(db::replay);
                pacing.requestFull();
                sched.trace(
                        nodeId,
                        "applied batch " + batch.id() + " ("
                                + applied.get().batch().status() + ")");
                requestPass();
            }
            if (unfinished.size() == BATCHES_PER_ROUND) {
                post("poll batches", () -> guarded(this::pollBatches));
            }
        }

        /** LeaderTerm.requestPass. */
        void requestPass() {
            if (!closed) {
                pacing.request();
            }
        }

        /** LeaderTerm.reload: the production {@link TermLoader#reloadIfDue} (always due here), then a full pass. */
        void reload() {
            if (!serving()) {
                return;
            }
            loader.reloadIfDue(epoch());
            pacing.requestFull();
            runPass();
        }

        /** ViewRereads.rescan: sync + scan in the background, merged into the view. */
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
            zk.sync((code, v) -> {
                if (code != Code.OK) {
                    rescanDone(number, null);
                    return;
                }
                zk.readTree(layout.modules(), (c2, nodes) -> rescanDone(number, c2 == Code.OK ? nodes : null));
            });
        }

        private void rescanDone(long number, List<SimZooKeeper.NodeData> nodes) {
            rescanRunning = false;
            if (closed) {
                return;
            }
            if (nodes != null) {
                toEvents(nodes).forEach(view::replay);
                view.pruneTombstones(Duration.ofMinutes(10));
                state.replay(new TermEvent.ViewProven(number));
                pacing.requestFull();
            } else if (state.writesInDoubt() > 0 && !rescanAgain && !rescanRetry) {
                rescanRetry = true; // ViewRereads.retryRescan: writes in doubt wait for a rescan that succeeds
                post1s(
                        "rescan retry",
                        () -> guarded(() -> {
                            rescanRetry = false;
                            rescan();
                        }));
            }
            if (rescanAgain) {
                rescanAgain = false;
                rescan();
            }
            requestPass();
        }

        /** PassRunner.run, with every pass costing nothing. */
        void runPass() {
            pacing.started();
            if (!serving()) {
                return;
            }
            long now = sched.now();
            Set<String> alertedBefore = state.alertKeys();
            Set<String> dirty = view.drainDirtyPids();
            PassPacing.Plan plan = pacing.plan(now, view.structureVersion());
            boolean full = plan.full();
            boolean placement = plan.placement();
            Reconciler.Scope scope = full ? Reconciler.Scope.FULL : new Reconciler.Scope(false, dirty, placement);
            List<Intent> sent = new ArrayList<>();
            Reconciler.Decision decision;
            try {
                decision = reconciler.decide(
                        view,
                        db,
                        state,
                        start.policy(),
                        token().epoch(),
                        start.grace().toNanos(),
                        now,
                        loader.rowsLoaded() ? scope : scope.withoutRows(),
                        intent -> {
                            sent.add(intent);
                            send(intent);
                        });
            } finally {
                for (Intent intent : sent) {
                    state.replay(new TermEvent.WriteIssued(intent));
                }
                start.writer().flush();
            }
            pacing.finished(plan, 0, 0);
            decision.alerts().forEach(a -> sched.trace(nodeId, "alert: " + a));
            alertedBefore.stream().filter(key -> !state.alerted(key)).forEach(k -> {});
            try {
                writeDatabase(decision);
            } catch (PidPoolException e) {
                if (e.code() == ErrorCode.FENCED) {
                    throw e;
                }
            }
        }

        private void writeDatabase(Reconciler.Decision decision) {
            store.recordCooldowns(decision.cooldownStarts(), decision.cooldownEnds(), token().epoch());
            if (!decision.cooldownStarts().isEmpty() || !decision.cooldownEnds().isEmpty()) {
                observer.databaseWrite("cooldowns", token().epoch());
            }
            if (!decision.pidUpdates().isEmpty()) {
                store.updatePids(decision.pidUpdates(), token().epoch());
                observer.databaseWrite("updatePids " + decision.pidUpdates().size(), token().epoch());
                for (PidRecord pid : decision.pidUpdates()) {
                    db.replay(new DbChange.PidPut(pid));
                }
            }
            if (!loader.rowsLoaded()) {
                return;
            }
            List<Assignment> upserts = decision.rowUpserts();
            Set<String> removals = decision.rowRemovals();
            if (!upserts.isEmpty()) {
                store.recordAssignments(upserts, token().epoch());
                observer.databaseWrite("recordAssignments " + upserts.size(), token().epoch());
            }
            if (!removals.isEmpty()) {
                store.removeAssignments(removals, token().epoch());
                observer.databaseWrite("removeAssignments " + removals.size(), token().epoch());
            }
            if (!upserts.isEmpty() || !removals.isEmpty()) {
                state.replay(new TermEvent.RowsWritten(upserts, new LinkedHashSet<>(removals)));
            }
        }

        /** PassRunner.send: outcomes are queued and settled in bursts on the serial executor. */
        private void send(Intent intent) {
            sched.trace(nodeId, "send " + intent);
            start.writer().submit(intent.writes()).whenComplete((results, error) -> {
                outcomes.add(new Object[] {intent, results, error});
                if (!settling) {
                    settling = true;
                    post("settle", this::settleOutcomes);
                }
            });
        }

        @SuppressWarnings("unchecked")
        private void settleOutcomes() {
            settling = false;
            Object[] o;
            while ((o = outcomes.poll()) != null) {
                settled((Intent) o[0], (List<WriteResult>) o[1], (Throwable) o[2]);
            }
        }

        /** PassRunner.settled: the production {@link WriteSettlement}, then the reads it asks for, then a pass. */
        void settled(Intent intent, List<WriteResult> results, Throwable error) {
            if (closed) {
                return;
            }
            PidPoolException failure = error == null ? null : unwrap(error);
            switch (WriteSettlement.settle(intent, results, failure, state, view, pacing)) {
                case FENCED -> {
                    return;
                }
                case RESCAN -> {
                    sched.trace(nodeId, intent + " failed: " + failure.getMessage());
                    rescan();
                }
                case REFRESH -> {
                    sched.trace(nodeId, intent + " failed: " + failure.getMessage());
                    refresh(intent);
                }
                case NONE -> {}
            }
            requestPass();
        }

        /** ViewRereads.refresh: re-reads the nodes a failed write touched, and their parents. */
        private void refresh(Intent intent) {
            Set<String> paths = new LinkedHashSet<>();
            for (ZkWrite write : intent.writes()) {
                paths.add(write.path());
                int slash = write.path().lastIndexOf('/');
                if (slash > 0) {
                    paths.add(write.path().substring(0, slash));
                }
            }
            List<String> list = List.copyOf(paths);
            zk.readMulti(list, (code, results) -> {
                if (closed) {
                    return;
                }
                if (code != Code.OK) {
                    rescan();
                    return;
                }
                for (int i = 0; i < list.size(); i++) {
                    SimZooKeeper.OpResult r = results.get(i);
                    if (r.code() == Code.OK) {
                        view.replay(new NodeEvent.Upsert(list.get(i), r.data(), stat(r.stat())));
                    } else if (r.code() == Code.NONODE) {
                        ZkView.Entry known = view.node(list.get(i));
                        if (known != null) {
                            view.replay(new NodeEvent.Removed(list.get(i), known.stat()));
                        }
                    }
                }
                if (intent.pid() != null) {
                    view.markDirty(intent.pid());
                }
                pacing.requestPlacement();
                requestPass();
            });
        }

        private PidPoolException unwrap(Throwable error) {
            Throwable cause =
                    error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            return cause instanceof PidPoolException p ? p : PidPoolException.unavailable(String.valueOf(cause), cause);
        }

        private void fenced(PidPoolException cause) {
            if (closed) {
                return;
            }
            sched.trace(nodeId, "fenced off in epoch " + epoch().value() + ": " + cause.getMessage());
            stepDown(cause.getMessage());
        }

        void suspend() {
            suspended = true;
            if (start.writer() != null) {
                start.writer().pause();
            }
        }

        void resume() {
            if (!suspended) {
                return;
            }
            suspended = false;
            if (start.writer() != null) {
                start.writer().resume();
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
            timers.forEach(SimScheduler.Event::cancel);
            view.trackChanges(false);
            if (start.writer() != null) {
                start.writer().close();
            }
        }
    }
}
