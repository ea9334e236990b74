package io.pidpool.client.internal;

import io.pidpool.client.Permit;
import io.pidpool.client.PidClient;
import io.pidpool.client.Registration;
import io.pidpool.client.internal.quota.HeldPids;
import io.pidpool.client.internal.zk.ZkSessions;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.HealthReport;
import io.pidpool.core.protocol.InstanceNode;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link PidClient} implementation: drives ZooKeeper for {@link PidTracker} (docs/design.md §4, SDK
 * side) and guards the exclusive hold with {@link Lease} and {@link PauseDetector} (timing in {@link
 * Timing}).
 *
 * <p>Parts of its own (docs/sdk.md "Parts of the client"): the pids watch ({@link PidsWatch}), the
 * acknowledgement writer ({@link AckWriter}), the {@link Watchdog}, the dispatch of the tracker's
 * actions ({@link ActionRunner}) and the Curator calls of registration ({@link CuratorRegistrar}).
 * What stays here, and why this class is still over 400 lines: the public lifecycle (start, close,
 * reports, quota calls), the connection events with suspend/resume, the registration's decisions
 * and close. They share the gate, the stop counter, the current session and the lifecycle, whose
 * races are easiest to judge in one place; they are the next to move out (a registration step over
 * an asynchronous port, so that the protocol simulation can run it, docs/simulation.md §9).
 *
 * <p>Concurrency:
 *
 * <ul>
 *   <li><b>State thread</b> ({@code pidclient-state-*}, one per client): owns the {@link PidTracker}
 *       (every PID's held/in-flight state), the current {@link Session}, its caches and the
 *       registration. All fields marked "state thread" are touched only there, so there are no
 *       locks. Registration runs here and may block on ZooKeeper (nothing is held at that point).
 *   <li><b>Curator threads</b> (connection-state listener, cache listeners, background callbacks):
 *       never change state; they post a task to the state thread. The one exception is the {@code
 *       granting} gate, which they close at once (SUSPENDED, LOST) so that {@link #heldPids()} is
 *       empty before the state thread even runs; only the state thread opens it.
 *   <li><b>Watchdog thread</b> ({@code pidclient-watchdog-*}): every T/20 measures pauses and checks
 *       the lease; every T/6 sends a heartbeat (several may be in flight, see {@link Heartbeats});
 *       owns the {@link PauseDetector}; posts stops to the state thread. It also fires the callback
 *       deadlines of {@link ListenerDispatch} (interrupt, outcome posted to the state thread).
 *   <li><b>Callback lanes</b> ({@link ListenerDispatch}): {@code onAssigned}/{@code onUpdated} on the
 *       call lane (the user's executor, fed from a hand-off thread, or the client's own threads),
 *       {@code onRevoked} on a revocation lane of the client's own threads, so a hanging login never
 *       delays a logout; the tracker guarantees one callback at a time per PID; the outcome is posted
 *       back to the state thread.
 *   <li><b>Callers</b>: {@link #heldPids()} reads volatile snapshots and the lock-free {@link Lease};
 *       {@link #start()} and {@link #close()} post to the state thread and wait with a timeout.
 * </ul>
 */
public final class DefaultPidClient implements PidClient {
    private static final Logger log = LoggerFactory.getLogger(DefaultPidClient.class);

    /** Longest instance-id prefix: a token is at most 64 characters, "-" + 16 hex digits follow. */
    public static final int MAX_PREFIX = 47;

    private static final Duration REGISTER_RETRY = Duration.ofMillis(500);
    private static final Duration LEAVE_WAIT = Duration.ofSeconds(2);

    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private enum Lifecycle {
        LATENT,
        STARTED,
        CLOSING,
        CLOSED
    }

    /** One registration: a ZooKeeper session, its instance node and the caches watching it. */
    private static final class Session {
        final long generation;
        final long sessionId;
        final Timing timing;
        final InstanceId instance;
        final String instancePath;
        final Heartbeats heartbeats;
        final Watchdog.Watched watched;
        // state thread
        volatile String pidsPath = "";
        AutoCloseable instanceCache;
        PidsWatch pidsWatch;

        Session(long generation, long sessionId, Timing timing, InstanceId instance, String instancePath) {
            this.generation = generation;
            this.sessionId = sessionId;
            this.timing = timing;
            this.instance = instance;
            this.instancePath = instancePath;
            this.heartbeats = new Heartbeats(timing);
            this.watched = new Watchdog.Watched(generation, sessionId, instancePath, heartbeats);
        }

        Registration toRegistration() {
            return new Registration(instance.value(), sessionId, timing.sessionTimeout(), pidsPath);
        }

        void closeCaches() {
            if (pidsWatch != null) {
                pidsWatch.close();
                pidsWatch = null;
            }
            if (instanceCache != null) {
                try {
                    instanceCache.close();
                } catch (Exception e) {
                    log.debug("Could not stop following {}: {}", instancePath, e.toString());
                }
                instanceCache = null;
            }
        }
    }

    private final ClientSettings settings;
    private final Ticker ticker;
    private final CuratorFramework curator;
    private final ScheduledExecutorService stateThread;
    /** The state thread itself (a task on it must not wait for it). */
    private volatile Thread stateThreadRef;

    private final ScheduledExecutorService watchdog;
    private final ListenerDispatch callbacks;
    private final ListenerInvoker invoker;
    private final PidNodes pidNodes;
    private final CuratorRegistrar registrar;
    private final ClientLoop loop = new Loop();
    private final AckWriter writer;
    private final Watchdog watchdogPart;
    private final ActionRunner actions;
    private final Lease lease = new Lease();
    private final AtomicReference<Lifecycle> lifecycle = new AtomicReference<>(Lifecycle.LATENT);
    private final CompletableFuture<Registration> firstRegistration = new CompletableFuture<>();
    /** The instance this client last registered as: named when it registers again (docs/design.md §6.2). */
    private volatile InstanceId lastInstance;
    /** Incremented whenever some thread closes the {@code granting} gate. */
    private final AtomicLong stops = new AtomicLong();
    /** PID nodes read (each one getData), for tests: own acknowledgements must not be among them. */
    private final AtomicLong nodesRead = new AtomicLong();

    private volatile boolean granting;
    private volatile Set<String> heldSnapshot = Set.of();
    private volatile State state = State.LATENT;
    private volatile Session current;
    private volatile Timing timing;
    private volatile String host;
    private volatile String prefix;
    /**
     * The ZooKeeper session the client is connected on, as last reported by a connection event (0 while
     * suspended or lost): lets {@link #heldPids()} and the permit check compare sessions without
     * calling into Curator. The lease's time bound does not depend on it.
     */
    private volatile long liveSessionId;
    /** The quota ledger, once started with a Redis address; {@code null} otherwise. */
    private volatile QuotaWiring quota;
    /** Set once the quota side is open: the instance registers only then (start()). */
    private volatile boolean readyToRegister;
    /** The shutdown hook and exit watch of a started client ({@link JvmExit}). */
    private volatile JvmExit jvmExit;

    /** The hold as the permit issuer sees it: the same snapshot and lease check as {@link #heldPids()}. */
    private final HeldPids hold = new HeldPids() {
        @Override
        public Set<String> heldPids() {
            return DefaultPidClient.this.heldPids();
        }

        @Override
        public boolean leaseValid() {
            return granting && lease.isValid(ticker.read(), liveSessionId);
        }
    };

    // state thread
    private final PidTracker tracker = new PidTracker();
    private final Set<Long> retiredSessions = new HashSet<>();
    private boolean connected;
    private boolean registerScheduled;
    private int outstandingReads;
    private CompletableFuture<Void> drained;

    private DefaultPidClient(ClientSettings settings) {
        this.settings = settings;
        this.ticker = settings.ticker();
        int n = CLIENTS.incrementAndGet();
        this.curator = settings.zkAuth()
                .configure(
                        ZkSessions.clientBuilder(settings.connectString(), settings.sessionTimeout())
                                .namespace(settings.layout().namespace()),
                        settings.layout().namespace())
                .build();
        this.stateThread = Executors.newSingleThreadScheduledExecutor(daemon("pidclient-state-" + n));
        stateThread.execute(() -> stateThreadRef = Thread.currentThread());
        this.watchdog = Executors.newSingleThreadScheduledExecutor(daemon("pidclient-watchdog-" + n));
        this.callbacks = ListenerDispatch.forClient(
                settings.callbackExecutor(),
                "pidclient-" + n,
                new ListenerDispatch.Timer() {
                    @Override
                    public Runnable schedule(Runnable task, long delayNanos) {
                        return deadlineTimer(task, delayNanos);
                    }

                    @Override
                    public long now() {
                        return System.nanoTime(); // the clock of the executor deadlineTimer schedules on
                    }
                },
                settings.callbackDeadline().toNanos(),
                new OutcomeQueue(this::post, (pid, outcome) -> apply(tracker.onCallbackDone(pid, outcome))));
        this.invoker = new ListenerInvoker(settings.listener(), settings.secretOpener(), settings.observer());
        this.pidNodes = new CuratorPidNodes(curator, settings.layout().namespace());
        this.registrar = new CuratorRegistrar(curator, settings.layout().namespace());
        this.writer = new AckWriter(pidNodes, tracker, loop, ticker::read, () -> {
            Session s = current;
            return s == null ? null : new AckWriter.Target(s.generation, s.sessionId);
        });
        this.watchdogPart = new Watchdog(new WatchdogHost(), lease, this::every, this::exists);
        this.actions = new ActionRunner(
                ActionRunner.Callbacks.of(callbacks),
                invoker,
                writer,
                tracker,
                lease,
                new ActionRunner.Gate() {
                    @Override
                    public boolean granting() {
                        return granting;
                    }

                    @Override
                    public long liveSession() {
                        return liveSessionId;
                    }

                    @Override
                    public long now() {
                        return ticker.read();
                    }
                },
                settings.callbackDeadline().toMillis());
    }

    /** What the watchdog asks of this client. */
    private final class WatchdogHost implements Watchdog.Host {
        @Override
        public Timing timing() {
            return timing;
        }

        @Override
        public Watchdog.Watched current() {
            Session s = current;
            return s == null ? null : s.watched;
        }

        @Override
        public boolean running() {
            return lifecycle.get() == Lifecycle.STARTED;
        }

        @Override
        public boolean granting() {
            return granting;
        }

        @Override
        public void stop() {
            DefaultPidClient.this.stop();
        }

        @Override
        public long liveSession() {
            return zkSessionId();
        }

        @Override
        public void suspend(String why) {
            post(() -> DefaultPidClient.this.suspend(why));
        }

        @Override
        public void instanceNodeLost(long generation, String why) {
            post(() -> onInstanceNodeLost(generation, why));
        }

        @Override
        public void onReply(long sessionId, long sentAt) {
            DefaultPidClient.this.onReply(sessionId, sentAt);
        }

        @Override
        public long now() {
            return ticker.read();
        }
    }

    /** The watchdog's ticks and heartbeats run on the watchdog thread. */
    private Runnable every(String what, long periodNanos, Runnable task) {
        ScheduledFuture<?> f = watchdog.scheduleWithFixedDelay(guarded(task), 0, periodNanos, TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    /** The heartbeat: an existence check of the instance node (answered on ZooKeeper's event thread). */
    private void exists(String path, PidNodes.Answer<Long> owner) throws Exception {
        curator.checkExists()
                .inBackground((client, event) -> owner.done(
                        Code.get(event.getResultCode()),
                        event.getStat() == null ? null : event.getStat().getEphemeralOwner()))
                .forPath(path);
    }

    /** What the parts ({@link PidsWatch}, {@link AckWriter}) ask of this client. */
    private final class Loop implements ClientLoop {
        @Override
        public void post(String what, Runnable task) {
            DefaultPidClient.this.post(task);
        }

        @Override
        public void apply(List<Action> actions) {
            DefaultPidClient.this.apply(actions);
        }

        @Override
        public void onReply(long sessionId, long sentAt) {
            DefaultPidClient.this.onReply(sessionId, sentAt);
        }

        @Override
        public void readSent(int nodes) {
            outstandingReads++;
            nodesRead.addAndGet(nodes);
        }

        @Override
        public void readAnswered() {
            outstandingReads--;
        }

        @Override
        public void writeSettled(long generation, String pid) {
            readIfNotCovered(generation, pid);
        }
    }

    /** PID nodes this client has read so far (tests). */
    long nodesRead() {
        return nodesRead.get();
    }

    /** The Curator client (tests inject Curator's own faults into it). */
    CuratorFramework curator() {
        return curator;
    }

    /** A client for validated settings; used by {@link PidClient.Builder}. */
    public static PidClient create(ClientSettings settings) {
        return new DefaultPidClient(settings);
    }

    // ---------------------------------------------------------------- public API

    @Override
    public void start() {
        if (!lifecycle.compareAndSet(Lifecycle.LATENT, Lifecycle.STARTED)) {
            throw PidPoolException.illegalState("start() may be called once; the client is %s", state());
        }
        state = State.REGISTERING;
        host = settings.host() != null ? settings.host() : ZkSessions.localHostName();
        prefix = settings.instancePrefix() != null ? settings.instancePrefix() : prefixFrom(host);
        jvmExit = JvmExit.install("pidclient-" + prefix, this::close, settings.closeOnJvmExit());
        observe(o -> o.started(settings.module().toString(), gauges()));
        // connect while the quota side opens (both take round trips); register only once it is open,
        // so that a Redis that cannot be reached fails start() before the leader assigns anything
        curator.getConnectionStateListenable().addListener((client, newState) -> onConnectionState(newState));
        curator.start();
        if (settings.hasQuota()) {
            try {
                QuotaWiring q = QuotaWiring.open(settings, hold, prefix, host, curator);
                q.observe(settings.observer());
                q.ownedThreads().ifPresent(jvmExit::watch);
                quota = q;
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }
        readyToRegister = true;
        post(this::register);
        Duration timeout = settings.startTimeout();
        try {
            firstRegistration.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            close();
            throw PidPoolException.unavailable(
                    "could not register with ZooKeeper at " + settings.connectString() + " within " + timeout, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            close();
            throw PidPoolException.unavailable("interrupted while registering", e);
        } catch (ExecutionException e) {
            close();
            throw PidPoolException.unavailable(
                    "could not register: " + e.getCause().getMessage(), e.getCause());
        }
    }

    @Override
    public Set<String> heldPids() {
        if (!granting || !lease.isValid(ticker.read(), liveSessionId)) {
            return Set.of();
        }
        return heldSnapshot;
    }

    @Override
    public Optional<Permit> tryAcquire(long commands) {
        return quota("tryAcquire").tryAcquire(commands);
    }

    @Override
    public CompletableFuture<Optional<Permit>> tryAcquireAsync(int commands) {
        return quota("tryAcquireAsync").tryAcquireAsync(commands);
    }

    @Override
    public long pidsWithoutLimit() {
        QuotaWiring q = quota;
        return q == null ? 0 : q.pidsWithoutLimit();
    }

    @Override
    public void refund(String deductionId, String refundId, long commands) {
        quota("refund").refund(deductionId, refundId, commands);
    }

    @Override
    public boolean reportLoginFailure(String pid, String reason) {
        return report(pid, HealthReport.loginFailure(reason));
    }

    @Override
    public boolean reportLoginConflict(String pid, String detail) {
        return report(pid, HealthReport.loginConflict(detail));
    }

    private boolean report(String pid, HealthReport report) {
        Names.requirePidId(pid, "pid");
        if (lifecycle.get() != Lifecycle.STARTED) {
            throw PidPoolException.illegalState("reporting PID %s: the client is %s", pid, state());
        }
        CompletableFuture<Boolean> accepted = new CompletableFuture<>();
        Runnable task = () -> {
            List<Action> actions = tracker.report(pid, report);
            if (actions == null) {
                log.info("Not reporting {} for PID {}: this client has no node for it", report.kind(), pid);
                accepted.complete(false);
                return;
            }
            log.warn("Reporting {} for PID {} to the leader", report.describe(), pid);
            apply(actions);
            accepted.complete(true);
        };
        if (Thread.currentThread() == stateThreadRef) {
            guarded(task).run();
        } else {
            post(task);
        }
        try {
            return accepted.get(settings.closeTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw PidPoolException.unavailable(
                    "the client did not take the report within " + settings.closeTimeout(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable("interrupted while reporting", e);
        } catch (ExecutionException e) {
            throw PidPoolException.unavailable("reporting failed: " + e.getCause(), e.getCause());
        }
    }

    private QuotaWiring quota(String operation) {
        if (!settings.hasQuota()) {
            throw PidPoolException.illegalState(
                    "%s needs the quota ledger: build the client with PidClient.builder().redisAddress(\"redis://...\")",
                    operation);
        }
        QuotaWiring q = quota;
        if (q == null || lifecycle.get() != Lifecycle.STARTED) {
            throw PidPoolException.illegalState("%s: the client is %s", operation, state());
        }
        return q;
    }

    @Override
    public State state() {
        return state;
    }

    @Override
    public Optional<Registration> registration() {
        Session s = current;
        return s == null ? Optional.empty() : Optional.of(s.toRegistration());
    }

    @Override
    public void close() {
        Lifecycle before =
                lifecycle.getAndUpdate(l -> l == Lifecycle.LATENT || l == Lifecycle.STARTED ? Lifecycle.CLOSING : l);
        if (before == Lifecycle.CLOSING || before == Lifecycle.CLOSED) {
            return;
        }
        stop();
        QuotaWiring q = quota;
        if (q != null) {
            q.stopGranting(); // first: no permit from here on, whatever the PIDs' state
        }
        if (before == Lifecycle.STARTED) {
            long deadline = System.nanoTime() + settings.closeTimeout().toNanos();
            CompletableFuture<Void> revoked = new CompletableFuture<>();
            post(() -> beginClose(revoked));
            if (!await(revoked, deadline - System.nanoTime())) {
                log.warn(
                        "close: listener callbacks or acknowledgements did not finish within {}; leaving anyway",
                        settings.closeTimeout());
            }
            CompletableFuture<Void> left = new CompletableFuture<>();
            post(() -> leave(left));
            await(left, Math.max(deadline - System.nanoTime(), LEAVE_WAIT.toNanos()));
        }
        if (q != null) {
            q.release(); // after the PIDs were revoked: worker slot, ledger, Redisson
        }
        shutdown();
        JvmExit exit = jvmExit;
        if (exit != null) {
            exit.close();
        }
        observe(ClientObserver::closed);
    }

    /** What metrics sample: the same held set and lease as heldPids(). */
    private ClientObserver.Gauges gauges() {
        return new ClientObserver.Gauges() {
            @Override
            public int heldPids() {
                return DefaultPidClient.this.heldPids().size();
            }

            @Override
            public double leaseMarginSeconds() {
                long left = granting ? lease.remaining(ticker.read()) : 0;
                return left > 0 ? left / 1e9 : 0.0;
            }
        };
    }

    private void observe(java.util.function.Consumer<ClientObserver> event) {
        try {
            event.accept(settings.observer());
        } catch (RuntimeException e) {
            log.warn("The client observer failed: {}", e.toString());
        }
    }

    // ---------------------------------------------------------------- connection events

    /** Curator's connection-state thread. */
    private void onConnectionState(ConnectionState newState) {
        log.debug("ZooKeeper connection {}", newState);
        switch (newState) {
            case SUSPENDED, READ_ONLY -> {
                long session = liveSessionId;
                liveSessionId = 0;
                stop();
                post(this::onSuspended);
                if (newState == ConnectionState.SUSPENDED && session != 0 && registrar.connectedOn(session)) {
                    registrar.probeConnection(session);
                }
            }
            case LOST -> {
                liveSessionId = 0;
                stop();
                post(this::onLost);
            }
            case CONNECTED, RECONNECTED -> {
                liveSessionId = zkSessionId();
                post(this::onConnected);
            }
        }
    }

    /** Any thread: close the gate at once; the state thread revokes when it gets there. */
    private void stop() {
        stops.incrementAndGet();
        granting = false;
    }

    private void onSuspended() {
        connected = false;
        suspend("the ZooKeeper connection is suspended");
    }

    private void onLost() {
        connected = false;
        Session s = current;
        if (s != null) {
            retire(s, "its ZooKeeper session was lost");
        }
    }

    private void onConnected() {
        connected = true;
        if (lifecycle.get() != Lifecycle.STARTED) {
            return;
        }
        Session s = current;
        long sessionId = zkSessionId();
        if (s == null) {
            register();
        } else if (sessionId != 0 && s.sessionId != sessionId) {
            retire(s, String.format("the ZooKeeper client is on another session (0x%x)", sessionId));
            register();
        } else {
            if (s.pidsWatch != null) {
                s.pidsWatch.reconnected(); // notifications are not replayed across a disconnection
            }
            try {
                watchdog.execute(
                        guarded(() -> watchdogPart.heartbeat(ticker.read(), true))); // prove the lease again now
            } catch (RejectedExecutionException closing) {
                log.debug("Client closing; no heartbeat");
            }
        }
    }

    /** State thread: stop granting and revoke everything; the session may still be fine. */
    private void suspend(String why) {
        if (tracker.granting()) {
            log.warn("Suspending: {}; revoking {} PIDs", why, tracker.heldIds().size());
        }
        if (current != null && lifecycle.get() == Lifecycle.STARTED) {
            state = State.SUSPENDED;
        }
        apply(tracker.suspend());
    }

    /** State thread: grant again once the same session is connected and the lease is fresh. */
    private void maybeResume() {
        if (lifecycle.get() != Lifecycle.STARTED || current == null || !connected || tracker.granting()) {
            return;
        }
        long seen = stops.get();
        if (!lease.isValid(ticker.read(), zkSessionId())) {
            return;
        }
        granting = true;
        if (stops.get() != seen) {
            granting = false; // someone stopped us meanwhile; the next reply retries
            return;
        }
        log.info("Granting on session 0x{} as {}", Long.toHexString(current.sessionId), current.instance);
        state = State.REGISTERED;
        apply(tracker.resume());
    }

    // ---------------------------------------------------------------- registration

    /** State thread: register this client on the ZooKeeper session it is connected with. */
    private void register() {
        // after onConnected (connected) and once start() opened the quota side, whichever comes last
        if (lifecycle.get() != Lifecycle.STARTED || current != null || !readyToRegister || !connected) {
            return;
        }
        long sessionId;
        int negotiatedMs;
        try {
            CuratorRegistrar.SessionInfo session = registrar.connectedSession();
            if (session == null) {
                return; // onConnected comes back here
            }
            sessionId = session.id();
            negotiatedMs = session.negotiatedMs();
        } catch (Exception e) {
            log.warn("Cannot read the ZooKeeper session yet: {}", e.toString());
            scheduleRegister();
            return;
        }
        if (sessionId == 0 || negotiatedMs <= 0) {
            scheduleRegister();
            return;
        }
        if (retiredSessions.contains(sessionId)) {
            registrar.endSession(sessionId);
            return;
        }
        InstanceId instance = InstanceId.of(prefix + "-" + Long.toHexString(sessionId));
        String path = settings.layout().instance(settings.module(), instance);
        long sentAt = ticker.read();
        Long owner;
        try {
            owner = registrar.createInstanceNode(
                    path,
                    InstanceNode.registering(settings.weight(), host, settings.callbackDeadline())
                            .withPreviousInstance(lastInstance == null ? null : lastInstance.value())
                            .encode());
        } catch (Exception e) {
            log.warn("Registering {} failed, retrying: {}", path, e.toString());
            scheduleRegister();
            return;
        }
        if (owner == null) {
            scheduleRegister(); // an earlier attempt's node that vanished before it could be read
            return;
        }
        if (owner != sessionId) {
            // the ZooKeeper client moved to a new session between reading the id and creating the node
            log.warn(
                    "Instance node {} is owned by session 0x{}, not 0x{}; registering again",
                    path,
                    Long.toHexString(owner),
                    Long.toHexString(sessionId));
            registrar.deleteIfOwnedBy(path, owner);
            scheduleRegister();
            return;
        }
        Timing t = Timing.ofMillis(negotiatedMs);
        apply(tracker.resetSession(sessionId));
        lease.begin(sessionId, t, sentAt);
        Session s = new Session(tracker.generation(), sessionId, t, instance, path);
        current = s;
        lastInstance = instance;
        timing = t;
        watchdogPart.schedule(t, s.heartbeats);
        watchInstanceNode(s);
        log.info(
                "Registered {} in module {} (session 0x{}, negotiated session timeout {} ms)",
                instance,
                settings.module(),
                Long.toHexString(sessionId),
                negotiatedMs);
        state = State.SUSPENDED;
        maybeResume();
        firstRegistration.complete(s.toRegistration());
    }

    private void scheduleRegister() {
        if (registerScheduled || lifecycle.get() != Lifecycle.STARTED) {
            return;
        }
        registerScheduled = true;
        try {
            stateThread.schedule(
                    guarded(() -> {
                        registerScheduled = false;
                        register();
                    }),
                    REGISTER_RETRY.toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            registerScheduled = false;
        }
    }

    /** State thread: this registration is over; revoke everything and forget its nodes. */
    private void retire(Session s, String why) {
        log.warn("Leaving registration {} (session 0x{}): {}", s.instance, Long.toHexString(s.sessionId), why);
        retiredSessions.add(s.sessionId);
        s.closeCaches();
        current = null;
        timing = null;
        lease.end();
        granting = false;
        if (lifecycle.get() == Lifecycle.STARTED) {
            state = State.REGISTERING;
        }
        apply(tracker.resetSession(0));
    }

    /** State thread: the registration is broken but the session lives on; end the session to start clean. */
    private void onInstanceNodeLost(long generation, String why) {
        Session s = current;
        if (s == null || s.generation != generation || lifecycle.get() != Lifecycle.STARTED) {
            return;
        }
        if (zkSessionId() != s.sessionId) {
            return; // the session itself is gone: onLost/onConnected handle it
        }
        retire(s, "its instance node " + why + " while the session is alive; starting a new session");
        registrar.endSession(s.sessionId);
    }

    // ---------------------------------------------------------------- watching

    private void watchInstanceNode(Session s) {
        s.instanceCache = registrar.watchInstanceNode(
                s.instancePath,
                data -> post(() -> onInstanceData(s.generation, data)),
                () -> post(() -> onInstanceNodeLost(s.generation, "was deleted")));
    }

    private void onInstanceData(long generation, byte[] data) {
        Session s = current;
        if (s == null || s.generation != generation || data == null) {
            return;
        }
        InstanceNode node;
        try {
            node = InstanceNode.decode(data);
        } catch (PidPoolException e) {
            log.warn("Instance node {} is unreadable (ignored until it changes): {}", s.instancePath, e.getMessage());
            return;
        }
        if (!node.hasPidsPath()) {
            return;
        }
        if (s.pidsPath.isEmpty()) {
            s.pidsPath = node.pidsPath();
            log.info("Leader answered: PIDs of {} are under {}", s.instance, s.pidsPath);
            watchPids(s);
        } else if (!s.pidsPath.equals(node.pidsPath())) {
            onInstanceNodeLost(generation, "moved its PIDs from " + s.pidsPath + " to " + node.pidsPath());
        }
    }

    private void watchPids(Session s) {
        s.pidsWatch = new PidsWatch(pidNodes, tracker, loop, s.generation, s.pidsPath);
        s.pidsWatch.start();
    }

    /** State thread: a write of this PID settled; a notification that waited for it is decided now. */
    private void readIfNotCovered(long generation, String pid) {
        Session s = current;
        if (s != null && s.generation == generation && s.pidsWatch != null) {
            s.pidsWatch.writeSettled(pid);
        }
    }

    // ---------------------------------------------------------------- actions

    /** State thread: carry out the tracker's decisions. */
    private void apply(List<Action> list) {
        // publish the held set before any callback is dispatched: a PID leaves heldPids() (and with it
        // every permit check) before its onRevoked can start
        publishHeld();
        actions.run(list);
        publishHeld();
        if (drained != null && outstandingReads == 0 && tracker.isQuiescent()) {
            drained.complete(null);
        }
    }

    /** The callback deadlines run on the watchdog thread. */
    private Runnable deadlineTimer(Runnable task, long delayNanos) {
        try {
            ScheduledFuture<?> f = watchdog.schedule(guarded(task), delayNanos, TimeUnit.NANOSECONDS);
            return () -> f.cancel(false);
        } catch (RejectedExecutionException closing) {
            return () -> {};
        }
    }

    private void publishHeld() {
        Set<String> held = tracker.takeHeldIfChanged();
        if (held != null) {
            heldSnapshot = held;
        }
    }

    // ---------------------------------------------------------------- lease, heartbeat, pauses

    /** Any thread: a successful reply on {@code sessionId} to a request sent at {@code sentAt}. */
    private void onReply(long sessionId, long sentAt) {
        if (zkSessionId() != sessionId) {
            return;
        }
        lease.recordReply(sessionId, sentAt);
        if (!granting && lifecycle.get() == Lifecycle.STARTED) {
            post(this::maybeResume);
        }
    }

    // ---------------------------------------------------------------- close

    /** State thread: revoke everything and answer DELETED; {@code done} completes when nothing is left. */
    private void beginClose(CompletableFuture<Void> done) {
        drained = done;
        apply(tracker.close());
    }

    /** State thread: delete the instance node, so the leader sees the instance gone at once. */
    private void leave(CompletableFuture<Void> done) {
        Session s = current;
        if (s == null) {
            done.complete(null);
            return;
        }
        s.closeCaches();
        registrar.delete(s.instancePath, () -> done.complete(null));
    }

    private void shutdown() {
        stateThread.shutdownNow();
        try {
            stateThread.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        watchdog.shutdownNow();
        Session s = current;
        if (s != null) {
            s.closeCaches();
        }
        current = null;
        timing = null;
        lease.end();
        curator.close();
        callbacks.shutdown();
        heldSnapshot = Set.of();
        lifecycle.set(Lifecycle.CLOSED);
        state = State.CLOSED;
        firstRegistration.completeExceptionally(PidPoolException.illegalState("the client was closed"));
        log.info("PidClient for module {} closed", settings.module());
    }

    // ---------------------------------------------------------------- helpers

    /** Runs {@code task} on the state thread; a failing task is logged and never kills the thread. */
    private void post(Runnable task) {
        try {
            stateThread.execute(guarded(task));
        } catch (RejectedExecutionException closed) {
            log.debug("Client closed; dropping a state task");
        }
    }

    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (Throwable t) {
                log.error("PidClient internal task failed", t);
            }
        };
    }

    private long zkSessionId() {
        return registrar.sessionId();
    }

    private static boolean await(CompletableFuture<?> future, long nanos) {
        try {
            future.get(Math.max(nanos, 0), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException | ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        boolean numbered = name.endsWith("-");
        return runnable -> {
            Thread thread = new Thread(runnable, numbered ? name + count.incrementAndGet() : name);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** An instance-id prefix from a host name: allowed characters only, at most {@link #MAX_PREFIX}. */
    static String prefixFrom(String host) {
        String p = host.replaceAll("[^A-Za-z0-9_.-]", "-");
        if (p.length() > MAX_PREFIX) {
            p = p.substring(0, MAX_PREFIX);
        }
        p = p.replaceAll("^[.-]+", "");
        return p.isEmpty() ? "client" : p;
    }
}
