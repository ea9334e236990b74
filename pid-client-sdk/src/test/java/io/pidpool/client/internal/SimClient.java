package io.pidpool.client.internal;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidListener;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.core.sim.SimPlatform;
import io.pidpool.core.sim.SimScheduler;
import io.pidpool.core.sim.SimScheduler.Proc;
import io.pidpool.core.sim.SimZooKeeper;
import io.pidpool.core.sim.SimZooKeeper.Code;
import io.pidpool.core.sim.SimZooKeeper.ConnState;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * One SDK client process on virtual time. REAL: {@link PidTracker}, {@link Lease}, {@link
 * Heartbeats}, {@link PauseDetector}, {@link Timing}, {@link ListenerInvoker}, the pids watch ({@link
 * PidsWatch}), the acknowledgement writer ({@link AckWriter}), the {@link Watchdog} and the dispatch
 * of the tracker's actions ({@link ActionRunner}), over {@link SimPidNodes} and this class's {@link
 * ClientLoop}, timers, heartbeat probe and lane times. Listener
 * callbacks go through the REAL {@link ListenerDispatch} (its lanes, its callback deadline), whose two
 * lanes are {@link SimLane}s of virtual threads. MIRRORED from {@link DefaultPidClient} (same method
 * names, same order of steps): the connection events with suspend/resume, the registration, the
 * instance-node cache and close. Curator is replaced by a
 * {@link SimZooKeeper.Client}; the state thread, the watchdog thread and the callback threads by
 * events of one {@link Proc}.
 *
 * <p>What the glue leaves out: Curator's CURATOR-525 SUSPENDED race and its probe, quota wiring,
 * health reports, the blocking start/close futures.
 *
 * <p>Concurrency: single-threaded on the {@link SimScheduler}.
 */
public final class SimClient {
    /** The listener's behaviour in virtual time, chosen by the schedule. */
    public interface Behaviour {
        /** How long {@code onAssigned} takes for this PID now. */
        long loginNanos(String pid);

        /** Whether this login is refused (onAssigned throws). */
        boolean loginFails(String pid);

        /** How long {@code onRevoked} takes. */
        long logoutNanos(String pid);

        /**
         * How long a call that starts now takes, given the time drawn when it was decided (it may
         * have waited in the lane while the platform recovered).
         */
        default long startedNanos(long drawn) {
            return drawn;
        }
    }

    private static final long REGISTER_RETRY = 500_000_000L;
    private static final int MAX_WRITES_PER_MULTI = 200;

    private final SimScheduler sched;
    private final SimZooKeeper zooKeeper;
    private final Proc proc;
    private final String name;
    private final String holder;
    private final ZkLayout layout;
    private final ModuleKey module;
    private final long requestedTimeout;
    private final SimPlatform platform;
    private final Behaviour behaviour;
    private final SimLane callLane;
    private final SimLane revocationLane;
    private final ListenerDispatch callbacks;
    private final long callbackDeadlineNanos;
    private final SimZooKeeper.Client zk;
    private final ListenerInvoker invoker;
    private final Lease lease = new Lease();
    private final PidTracker tracker = new PidTracker();
    private final Set<Long> retiredSessions = new HashSet<>();
    private final SimPidNodes nodes;
    private final ClientLoop loop = new Loop();
    private final AckWriter writer;
    private final Watchdog watchdog;
    private final ActionRunner runner;

    private boolean started;
    private boolean closing;
    private boolean closed;
    private boolean granting;
    private long stops;
    private long liveSessionId;
    private boolean connected;
    private boolean registerScheduled;
    private boolean registering;
    private int outstandingReads;
    private Session current;
    private Timing timing;

    /** One registration (as in DefaultPidClient.Session). */
    private final class Session {
        final long generation;
        final long sessionId;
        final Timing timing;
        final InstanceId instance;
        final String instancePath;
        final Heartbeats heartbeats;
        final Watchdog.Watched watched;
        String pidsPath = "";
        PidsWatch pidsWatch;
        boolean closedCaches;

        Session(long generation, long sessionId, Timing timing, InstanceId instance, String instancePath) {
            this.generation = generation;
            this.sessionId = sessionId;
            this.timing = timing;
            this.instance = instance;
            this.instancePath = instancePath;
            this.heartbeats = new Heartbeats(timing);
            this.watched = new Watchdog.Watched(generation, sessionId, instancePath, heartbeats);
        }

        void closeCaches() {
            closedCaches = true;
            if (pidsWatch != null) {
                pidsWatch.close();
                pidsWatch = null;
            }
        }
    }

    /**
     * @param holder the name the platform knows this process incarnation by
     */
    public SimClient(
            SimScheduler sched,
            SimZooKeeper zooKeeper,
            Proc proc,
            String holder,
            ZkLayout layout,
            ModuleKey module,
            long requestedTimeout,
            SimPlatform platform,
            Behaviour behaviour,
            long callbackDeadlineNanos) {
        this.sched = sched;
        this.zooKeeper = zooKeeper;
        this.proc = proc;
        this.name = proc.name();
        this.holder = holder;
        this.layout = layout;
        this.module = module;
        this.requestedTimeout = requestedTimeout;
        this.platform = platform;
        this.behaviour = behaviour;
        this.callbackDeadlineNanos = callbackDeadlineNanos;
        this.callLane = new SimLane(
                        sched,
                        proc,
                        name,
                        ListenerDispatch.DEFAULT_CALL_THREADS,
                        callbackDeadlineNanos,
                        this::callReturned)
                .atStart(behaviour::startedNanos);
        this.revocationLane = new SimLane(
                sched, proc, name, ListenerDispatch.REVOCATION_THREADS, callbackDeadlineNanos, (pid, o) -> {});
        this.callbacks = new ListenerDispatch(
                callLane,
                revocationLane,
                new ListenerDispatch.Timer() {
                    @Override
                    public Runnable schedule(Runnable task, long delay) {
                        SimScheduler.Event h = sched.after(delay, proc, name + " callback deadline", task);
                        return h::cancel;
                    }

                    @Override
                    public long now() {
                        return sched.now();
                    }
                },
                callbackDeadlineNanos,
                new OutcomeQueue(
                        task -> post("callback outcomes", task),
                        (pid, outcome) -> apply(tracker.onCallbackDone(pid, outcome))));
        this.zk = zooKeeper.client(name, proc, requestedTimeout);
        this.invoker = new ListenerInvoker(new PlatformListener(), (keyId, ciphertext) -> "pw");
        this.nodes = new SimPidNodes(zk);
        this.writer = new AckWriter(nodes, tracker, loop, sched::now, () -> {
            Session s = current;
            return s == null ? null : new AckWriter.Target(s.generation, s.sessionId);
        });
        this.watchdog = new Watchdog(new WatchdogHost(), lease, this::every, this::exists);
        this.runner = new ActionRunner(
                new ActionRunner.Callbacks() {
                    // the lanes take the time the schedule draws for each callback
                    @Override
                    public void call(String pid, Supplier<Outcome> body, Supplier<Outcome> overrun) {
                        callLane.next(behaviour.loginNanos(pid));
                        callbacks.call(pid, body, overrun);
                    }

                    @Override
                    public void revoke(String pid, Supplier<Outcome> body) {
                        revocationLane.next(behaviour.logoutNanos(pid));
                        callbacks.revoke(pid, body);
                    }
                },
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
                        return sched.now();
                    }
                },
                callbackDeadlineNanos / 1_000_000);
    }

    /** What the production {@link Watchdog} asks of its client. */
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
            return started && !closing;
        }

        @Override
        public boolean granting() {
            return granting;
        }

        @Override
        public void stop() {
            SimClient.this.stop();
        }

        @Override
        public long liveSession() {
            return zk.sessionId();
        }

        @Override
        public void suspend(String why) {
            post("suspend", () -> SimClient.this.suspend(why));
        }

        @Override
        public void instanceNodeLost(long generation, String why) {
            post("instance " + why, () -> onInstanceNodeLost(generation, why));
        }

        @Override
        public void onReply(long sessionId, long sentAt) {
            SimClient.this.onReply(sessionId, sentAt);
        }

        @Override
        public long now() {
            return sched.now();
        }
    }

    /** The watchdog thread: a repeating event of this process until cancelled or the process ends. */
    private Runnable every(String what, long periodNanos, Runnable task) {
        boolean[] cancelled = {false};
        Runnable[] loop = new Runnable[1];
        loop[0] = () -> {
            if (closed || cancelled[0]) {
                return;
            }
            task.run();
            sched.after(periodNanos, proc, name + " " + what, loop[0]);
        };
        sched.after(0, proc, name + " " + what, loop[0]);
        return () -> cancelled[0] = true;
    }

    /** The heartbeat's existence check. */
    private void exists(String path, PidNodes.Answer<Long> owner) {
        zk.exists(
                path,
                (code, r) -> owner.done(
                        org.apache.zookeeper.KeeperException.Code.valueOf(code.name()),
                        r == null || r.stat() == null ? null : r.stat().ephemeralOwner()));
    }

    /** What the production parts ({@link PidsWatch}, {@link AckWriter}) ask of their client. */
    private final class Loop implements ClientLoop {
        @Override
        public void post(String what, Runnable task) {
            SimClient.this.post(what, task);
        }

        @Override
        public void apply(List<Action> actions) {
            SimClient.this.apply(actions);
        }

        @Override
        public void onReply(long sessionId, long sentAt) {
            SimClient.this.onReply(sessionId, sentAt);
        }

        @Override
        public void readSent(int nodes) {
            outstandingReads++;
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

    public SimZooKeeper.Client zk() {
        return zk;
    }

    public String holder() {
        return holder;
    }

    public Set<String> heldIds() {
        return tracker.heldIds();
    }

    /** The PIDs heldPids() would report now (gate + lease). */
    public boolean granting() {
        return granting && lease.isValid(sched.now(), liveSessionId);
    }

    public long sessionId() {
        return current == null ? 0 : current.sessionId;
    }

    /** The user's listener: logs in and out of the platform; its time is spent by the dispatch. */
    private final class PlatformListener implements PidListener {
        @Override
        public void onAssigned(PidAccount account) throws Exception {
            platform.login(account.id(), holder);
            if (behaviour.loginFails(account.id())) {
                // the hold ends when the refusal returns (see callback)
                throw new IllegalStateException("login refused by the platform");
            }
        }

        @Override
        public void onRevoked(PidAccount account) {
            platform.logout(account.id(), holder);
        }
    }

    public void start() {
        started = true;
        zk.onState(this::onConnectionState);
        zk.start();
    }

    /** The process dies now (the platform sees every hold end). */
    public void crash() {
        closed = true;
        zk.crash();
        platform.died(holder);
    }

    // ---------------------------------------------------------------- connection events

    private void onConnectionState(ConnState state) {
        switch (state) {
            case SUSPENDED -> {
                liveSessionId = 0;
                stop();
                post("onSuspended", this::onSuspended);
            }
            case LOST -> {
                liveSessionId = 0;
                stop();
                post("onLost", this::onLost);
            }
            case CONNECTED, RECONNECTED -> {
                liveSessionId = zk.sessionId();
                post("onConnected", this::onConnected);
            }
        }
    }

    private void stop() {
        stops++;
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
        if (!started || closing) {
            return;
        }
        Session s = current;
        long sessionId = zk.sessionId();
        if (s == null) {
            register();
        } else if (sessionId != 0 && s.sessionId != sessionId) {
            retire(s, "the ZooKeeper client is on another session");
            register();
        } else {
            if (s.pidsWatch != null) {
                s.pidsWatch.reconnected();
            } else if (s.pidsPath.isEmpty()) {
                readInstance(s);
            }
            watchdog.heartbeat(sched.now(), true);
        }
    }

    private void suspend(String why) {
        if (tracker.granting()) {
            sched.trace(
                    name,
                    "suspending: " + why + "; revoking " + tracker.heldIds().size());
        }
        apply(tracker.suspend());
    }

    private void maybeResume() {
        if (!started || closing || current == null || !connected || tracker.granting()) {
            return;
        }
        long seen = stops;
        if (!lease.isValid(sched.now(), zk.sessionId())) {
            return;
        }
        granting = true;
        if (stops != seen) {
            granting = false;
            return;
        }
        sched.trace(name, "granting on session 0x" + Long.toHexString(current.sessionId));
        apply(tracker.resume());
    }

    // ---------------------------------------------------------------- registration

    private void register() {
        if (!started || closing || current != null || registering) {
            return;
        }
        if (!zk.connected()) {
            return;
        }
        long sessionId = zk.sessionId();
        long negotiated = zk.negotiatedTimeout();
        if (retiredSessions.contains(sessionId)) {
            zooKeeper.expire(sessionId); // DefaultPidClient.expireSession: a clean new session
            return;
        }
        InstanceId instance = InstanceId.of(name + "-" + Long.toHexString(sessionId));
        String path = layout.instance(module, instance);
        long sentAt = sched.now();
        registering = true;
        zk.createWithParents(
                path,
                InstanceNode.registering(1, name, java.time.Duration.ofNanos(callbackDeadlineNanos))
                        .encode(),
                SimZooKeeper.Mode.EPHEMERAL,
                (code, r) -> {
                    if (code == Code.OK || code == Code.NODEEXISTS) {
                        zk.exists(path, (c2, st) -> {
                            registering = false;
                            if (c2 != Code.OK || st.stat() == null) {
                                scheduleRegister();
                            } else if (st.stat().ephemeralOwner() != sessionId) {
                                scheduleRegister();
                            } else {
                                registered(sessionId, negotiated, instance, path, sentAt);
                            }
                        });
                    } else {
                        registering = false;
                        scheduleRegister();
                    }
                });
    }

    private void registered(long sessionId, long negotiated, InstanceId instance, String path, long sentAt) {
        if (closing || current != null || zk.sessionId() != sessionId) {
            scheduleRegister();
            return;
        }
        Timing t = new Timing(negotiated);
        apply(tracker.resetSession(sessionId));
        lease.begin(sessionId, t, sentAt);
        Session s = new Session(tracker.generation(), sessionId, t, instance, path);
        current = s;
        timing = t;
        watchdog.schedule(t, s.heartbeats);
        readInstance(s);
        sched.trace(name, "registered " + instance + " (session 0x" + Long.toHexString(sessionId) + ")");
        maybeResume();
    }

    private void scheduleRegister() {
        if (registerScheduled || !started || closing) {
            return;
        }
        registerScheduled = true;
        sched.after(REGISTER_RETRY, proc, name + " register retry", () -> {
            registerScheduled = false;
            register();
        });
    }

    private void retire(Session s, String why) {
        sched.trace(name, "leaving registration " + s.instance + ": " + why);
        retiredSessions.add(s.sessionId);
        s.closeCaches();
        current = null;
        timing = null;
        lease.end();
        granting = false;
        apply(tracker.resetSession(0));
    }

    private void onInstanceNodeLost(long generation, String why) {
        Session s = current;
        if (s == null || s.generation != generation || closing) {
            return;
        }
        if (zk.sessionId() != s.sessionId) {
            return;
        }
        retire(s, "its instance node " + why + " while the session is alive; starting a new session");
        zooKeeper.expire(s.sessionId);
    }

    // ---------------------------------------------------------------- watching

    /** CuratorCache SINGLE_NODE_CACHE: a one-shot data watch, re-armed on every event. */
    private void readInstance(Session s) {
        zk.getDataWatched(
                s.instancePath,
                event -> {
                    if (s.closedCaches) {
                        return;
                    }
                    if (event.type() == SimZooKeeper.EventType.DELETED) {
                        post("instance deleted", () -> onInstanceNodeLost(s.generation, "was deleted"));
                    } else {
                        readInstance(s);
                    }
                },
                (code, r) -> {
                    if (code == Code.OK && !s.closedCaches) {
                        onInstanceData(s.generation, r.data());
                    }
                });
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
            return;
        }
        if (!node.hasPidsPath()) {
            return;
        }
        if (s.pidsPath.isEmpty()) {
            s.pidsPath = node.pidsPath();
            s.pidsWatch = new PidsWatch(nodes, tracker, loop, s.generation, s.pidsPath);
            s.pidsWatch.start();
        } else if (!s.pidsPath.equals(node.pidsPath())) {
            onInstanceNodeLost(generation, "moved its PIDs");
        }
    }

    private void readIfNotCovered(long generation, String pid) {
        Session s = current;
        if (s != null && s.generation == generation && s.pidsWatch != null) {
            s.pidsWatch.writeSettled(pid);
        }
    }

    // ---------------------------------------------------------------- actions

    /** DefaultPidClient.apply. */
    private void apply(List<Action> actions) {
        runner.run(actions);
        if (closing && !closed && outstandingReads == 0 && tracker.isQuiescent()) {
            leave();
        }
    }

    /** A call's time is up: a refused login is over on the platform (the hold ends as it returns). */
    private void callReturned(String pid, Outcome outcome) {
        if (outcome instanceof Outcome.Failed) {
            platform.logout(pid, holder);
        }
    }

    // ---------------------------------------------------------------- lease, heartbeat, pauses

    private void onReply(long sessionId, long sentAt) {
        if (zk.sessionId() != sessionId) {
            return;
        }
        lease.recordReply(sessionId, sentAt);
        if (!granting && started && !closing) {
            post("maybeResume", this::maybeResume);
        }
    }

    // ---------------------------------------------------------------- close

    /** A graceful close (scale in): revoke everything, answer DELETED, then leave. */
    public void close(long timeoutNanos) {
        post("close", () -> {
            closing = true;
            granting = false;
            apply(tracker.close());
            sched.after(timeoutNanos, proc, name + " close timeout", this::leave);
        });
    }

    private void leave() {
        if (closed) {
            return;
        }
        closed = true;
        Session s = current;
        if (s != null && zk.connected()) {
            zk.delete(s.instancePath, -1, (code, r) -> zk.close());
        } else {
            zk.close();
        }
        sched.trace(name, "left");
    }

    public boolean closed() {
        return closed;
    }

    private void post(String what, Runnable task) {
        sched.after(0, proc, what, () -> {
            if (!closed || what.startsWith("callback")) {
                task.run();
            }
        });
    }
}
