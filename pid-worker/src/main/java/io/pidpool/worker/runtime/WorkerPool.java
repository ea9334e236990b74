package io.pidpool.worker.runtime;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.core.ring.SlotRange;
import io.pidpool.worker.ring.CuratorRingMembership;
import io.pidpool.worker.ring.GroupRing;
import io.pidpool.worker.ring.RingMembership;
import io.pidpool.worker.ring.WorkerIdentity;
import io.pidpool.worker.task.JdbiTaskStore;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskSchema;
import io.pidpool.worker.task.TaskStore;
import io.pidpool.worker.task.TypedRanges;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One leaderless task worker : a member of its group's consistent-hash ring in ZooKeeper
 * that runs the due tasks of the ranges it owns, with a pool of handler threads.
 *
 * <pre>{@code
 * WorkerPool pool = WorkerPool.builder()
 *         .curator(client)                 // started CuratorFramework
 *         .cluster("default")              // ZooKeeper namespace /pidpool/<cluster>
 *         .group("default")                // /workers/<group>/<memberId>
 *         .dataSource(dataSource)          // task table (migrated at start unless told not to)
 *         .handler("usage.sync", task -> ledger.apply(task.body()))
 *         .build()
 *         .start();
 * ...
 * pool.close();                            // leaves the ring, finishes or releases claimed tasks
 * }</pre>
 *
 * <p><b>At-least-once.</b> Handlers must be idempotent: see {@link TaskHandler} and {@code
 * docs/worker.md} for when a task runs twice and how often that can happen.
 *
 * <p><b>Size.</b> A third of this file is the {@link Builder}, each option with its default; the
 * rest is the lifecycle and the loop thread, kept together because {@link #close()} hands the loop
 * its stop and waits for its drain.
 *
 * <p>Concurrency: lifecycle is an enum changed by compare-and-set; one loop thread claims and
 * settles ({@link TaskWorker}, paced by a {@link Pacer}), handlers run on their own threads; all
 * public methods are thread-safe.
 */
public final class WorkerPool implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerPool.class);

    /** Lifecycle of a pool. */
    public enum State {
        LATENT,
        STARTED,
        STOPPING,
        CLOSED
    }

    private final String group;
    private final String memberId;
    private final WorkerConfig config;
    private final Set<String> types;
    private final DataSource migrateDataSource;
    private final RingMembership membership;
    private final TaskWorker worker;
    private final Ticker ticker;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private final Pacer pacer;
    private final Thread loop;

    private WorkerPool(Builder b, TaskStore store, RingMembership membership) {
        this.group = b.group;
        this.memberId = membership.memberId();
        this.config = b.config;
        this.types = Collections.unmodifiableSet(new TreeSet<>(b.handlers.keySet()));
        this.migrateDataSource = b.migrate ? b.dataSource : null;
        this.membership = membership;
        this.ticker = b.ticker;
        this.pacer = new Pacer(config.pollInterval());
        HandlerRunner runner = new HandlerRunner(memberId, b.handlers, config.concurrency(), config.handlerTimeout());
        this.worker = new TaskWorker(
                group, memberId, config, store, membership, runner, b.clock, b.ticker, b.metrics, b.random);
        this.loop = new Thread(this::run, "pidpool-worker-" + memberId);
        this.loop.setDaemon(true);
        membership.addListener(this::wakeUp);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Migrates the task table (if built with a data source), joins the ring and starts polling. */
    public WorkerPool start() {
        requireState(state.compareAndSet(State.LATENT, State.STARTED), "worker %s was already started", memberId);
        try {
            if (migrateDataSource != null) {
                TaskSchema.migrate(migrateDataSource);
            }
            membership.start();
        } catch (RuntimeException e) {
            state.set(State.CLOSED);
            membership.close();
            worker.close();
            throw e;
        }
        loop.start();
        LOG.info(
                "worker {} of group {} started ({} virtual nodes, task types {})",
                memberId,
                group,
                config.virtualNodes(),
                types);
        return this;
    }

    /**
     * Graceful stop: starts no more handlers, leaves the ring (its successors take its ranges at
     * once), lets running ones finish (at most the handler timeout), releases claimed tasks that
     * never started and writes the outcomes. Waits at most the shutdown timeout. Idempotent.
     */
    @Override
    public void close() {
        if (state.compareAndSet(State.LATENT, State.CLOSED)) {
            worker.close();
            return;
        }
        worker.stop(); // before STOPPING is visible: no handler starts once it is
        if (!state.compareAndSet(State.STARTED, State.STOPPING)) {
            return;
        }
        membership.close();
        wakeUp();
        try {
            loop.join(config.shutdownTimeout().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (loop.isAlive()) {
            LOG.warn(
                    "worker {} did not stop within {}; its claimed tasks return when their lease ends",
                    memberId,
                    config.shutdownTimeout());
            loop.interrupt();
        }
        worker.close();
        state.set(State.CLOSED);
        LOG.info("worker {} of group {} stopped", memberId, group);
    }

    /** Ends waiting for the next poll: call after enqueueing urgent tasks, or on a ring change. */
    public void wakeUp() {
        pacer.wakeUp();
    }

    public String memberId() {
        return memberId;
    }

    public String group() {
        return group;
    }

    public State state() {
        return state.get();
    }

    /** The ring of every live member of the group this worker currently sees, whatever they run. */
    public ConsistentHashRing ring() {
        return membership.ring();
    }

    /** The members this worker currently sees with the task types each runs, and the ring of each type. */
    public GroupRing groupRing() {
        return membership.groupRing();
    }

    /** The task types this worker has handlers for (and advertises in its ring node). */
    public Set<String> types() {
        return types;
    }

    /** The ranges this worker polls now for its types (as of its last cycle), one entry per type ring. */
    public List<TypedRanges> ownedRanges() {
        return worker.ownedRanges();
    }

    /**
     * PENDING tasks per owned range (of this worker's types), as counted at the last backlog
     * interval; ranges of different type rings that coincide are added up.
     */
    public Map<SlotRange, Long> backlogByRange() {
        return worker.lastBacklog();
    }

    /**
     * PENDING tasks per type that no live member of the group runs, as counted at the last backlog
     * interval if this worker is the group's reporter ({@link GroupRing#reporter()}); else empty.
     */
    public Map<String, Long> unhandledBacklog() {
        return worker.lastUnhandled();
    }

    private void run() {
        int failures = 0;
        while (state.get() == State.STARTED) {
            try {
                worker.maintain();
                int claimed = worker.runOnce();
                if (failures > 0) {
                    LOG.info("worker {}: task store reachable again after {} failed cycles", memberId, failures);
                    failures = 0;
                }
                if (claimed == 0) {
                    pacer.pauseBetweenPolls();
                }
            } catch (PidPoolException e) {
                failures++;
                if (failures == 1) {
                    LOG.warn("worker {}: task store unavailable, backing off: {}", memberId, e.getMessage());
                } else {
                    LOG.debug("worker {}: still failing: {}", memberId, e.getMessage());
                }
                pacer.pauseAfterFailures(failures);
            } catch (RuntimeException e) {
                failures++;
                LOG.error("worker {}: unexpected failure in the task loop", memberId, e);
                pacer.pauseLongest();
            }
        }
        drain();
    }

    /** After stop: write the outcomes the store refused so far, until the shutdown timeout. */
    private void drain() {
        long deadline = ticker.read() + config.shutdownTimeout().toNanos();
        while (worker.hasUnsettled() && ticker.read() - deadline < 0) {
            try {
                worker.settlePending();
            } catch (PidPoolException e) {
                if (!sleep(Duration.ofMillis(100))) {
                    return;
                }
            }
        }
    }

    private static boolean sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Builds a {@link WorkerPool}; {@code curator} (or {@code membership}) and a task source are required. */
    public static final class Builder {
        private CuratorFramework curator;
        private String cluster = "default";
        private String group = "default";
        private DataSource dataSource;
        private TaskStore store;
        private boolean migrate = true;
        private RingMembership membership;
        private String memberId;
        private String host;
        private final Map<String, TaskHandler> handlers = new LinkedHashMap<>();
        private WorkerConfig config = WorkerConfig.defaults();
        private WorkerMetrics metrics = WorkerMetrics.NOOP;
        private Clock clock = Clock.systemUTC();
        private Ticker ticker = Ticker.system();
        private RandomGenerator random = new SplittableRandom();

        private Builder() {}

        /** A started Curator client; the pool works in its namespace {@code pidpool/<cluster>}. */
        public Builder curator(CuratorFramework client) {
            this.curator = client;
            return this;
        }

        public Builder cluster(String name) {
            this.cluster = name;
            return this;
        }

        public Builder group(String name) {
            this.group = name;
            return this;
        }

        /** The database of the task table; a {@link JdbiTaskStore} is built on it. */
        public Builder dataSource(DataSource ds) {
            this.dataSource = ds;
            return this;
        }

        /** Whether {@link #start} runs the task-table migrations (default true; needs a data source). */
        public Builder migrateSchema(boolean on) {
            this.migrate = on;
            return this;
        }

        /** Another task store (tests: an in-memory fake); replaces {@link #dataSource}. */
        public Builder taskStore(TaskStore taskStore) {
            this.store = taskStore;
            return this;
        }

        /** Ring membership other than ZooKeeper's (tests); replaces {@link #curator}. */
        public Builder membership(RingMembership m) {
            this.membership = m;
            return this;
        }

        /** A fixed member id instead of a generated one (see {@link WorkerIdentity}). */
        public Builder memberId(String id) {
            this.memberId = id;
            return this;
        }

        public Builder host(String name) {
            this.host = name;
            return this;
        }

        /**
         * Runs tasks of {@code type} (1-128 characters of {@code [A-Za-z0-9_.:-]}, as {@link
         * io.pidpool.worker.task.NewTask#type()}). The types are advertised in the ring node: this
         * worker owns tasks of its types only (docs/worker.md §3).
         */
        public Builder handler(String type, TaskHandler handler) {
            NewTask.requireType(type);
            requireNonNull(handler, "handler");
            requireArgument(!handlers.containsKey(type), "type", "a handler for '%s' is already registered", type);
            handlers.put(type, handler);
            return this;
        }

        public Builder handlers(Map<String, TaskHandler> byType) {
            byType.forEach(this::handler);
            return this;
        }

        public Builder config(WorkerConfig c) {
            this.config = requireNonNull(c, "config");
            return this;
        }

        public Builder metrics(WorkerMetrics m) {
            this.metrics = requireNonNull(m, "metrics");
            return this;
        }

        /** Wall clock for stored times (leases, retry times); injected for tests. */
        public Builder clock(Clock c) {
            this.clock = requireNonNull(c, "clock");
            return this;
        }

        /** Monotonic time for intervals; injected for tests. */
        public Builder ticker(Ticker t) {
            this.ticker = requireNonNull(t, "ticker");
            return this;
        }

        /** Source of member ids and claim ids. */
        public Builder random(RandomGenerator r) {
            this.random = requireNonNull(r, "random");
            return this;
        }

        public WorkerPool build() {
            Names.requireToken(cluster, "cluster");
            Names.requireToken(group, "group");
            requireArgument(
                    store != null || dataSource != null, "dataSource", "a dataSource or a taskStore is required");
            requireArgument(curator != null || membership != null, "curator", "a curator client is required");
            requireArgument(!handlers.isEmpty(), "handlers", "register at least one task handler");
            if (store == null) {
                store = JdbiTaskStore.create(dataSource);
            } else {
                migrate = migrate && dataSource != null;
            }
            String h = host != null ? host : WorkerIdentity.localHost();
            RingMembership m = membership;
            if (m == null) {
                String id = memberId != null ? memberId : WorkerIdentity.generate(h, random, clock);
                m = new CuratorRingMembership(
                        curator.usingNamespace("pidpool/" + cluster),
                        group,
                        id,
                        config.virtualNodes(),
                        handlers.keySet(),
                        h,
                        clock);
            }
            return new WorkerPool(this, store, m);
        }
    }
}
