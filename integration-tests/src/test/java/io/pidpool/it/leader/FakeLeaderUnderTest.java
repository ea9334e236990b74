package io.pidpool.it.leader;

import io.pidpool.client.testing.FakeLeader;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SDK's {@link FakeLeader} (which writes the protocol's nodes, every write fenced by {@code
 * check(/epoch)}) plus the smallest policy the fault scenarios need:
 *
 * <ul>
 *   <li>answers each new registration in any module under {@code /modules} (handshake);
 *   <li>gives every free PID to the live, answered instance holding the fewest (no rebalancing of
 *       PIDs already held);
 *   <li>frees a PID at once when its node says DELETED (a graceful close: the instance gets nothing
 *       more from then on) or a failed ADDING (then
 *       keeps it out of assignment for 1 s); otherwise parks the PIDs of an instance whose ephemeral
 *       node vanished until {@link #grace()} has passed since it <em>observed</em> that, then removes
 *       the instance's {@code -pids} node and frees them;
 *   <li>does nothing while its own connection is SUSPENDED or LOST.
 * </ul>
 *
 * <p>It polls ZooKeeper every {@value #TICK_MS} ms, so it observes a vanished node up to one tick
 * late (which only delays moves). Its decisions are logged and kept as {@link #events()}.
 *
 * <p>Concurrency: one loop thread owns all policy state; {@link #addPids} enqueues, {@link
 * #assignments} and {@link #events} read published snapshots.
 */
public final class FakeLeaderUnderTest implements LeaderUnderTest {
    private static final Logger log = LoggerFactory.getLogger(FakeLeaderUnderTest.class);
    static final long TICK_MS = 50;
    private static final long FAILURE_COOLDOWN_NANOS = Duration.ofSeconds(1).toNanos();

    /** One decision or observation of the leader. */
    public record Event(String kind, String module, String instance, String pid, long atNanos) {}

    private record NewPid(ModuleKey module, String pid) {}

    /** An instance the leader has seen (loop thread only). */
    private static final class Known {
        final FakeLeader.Instance instance;
        boolean answered;
        /** Answered DELETED without being asked: it is closing, give it nothing more. */
        boolean leaving;

        long goneAt = -1;

        Known(FakeLeader.Instance instance) {
            this.instance = instance;
        }
    }

    /** One module's pool and assignments (loop thread only). */
    private static final class ModuleState {
        final Map<String, AccountPayload> pool = new LinkedHashMap<>();
        final Map<String, Known> instances = new LinkedHashMap<>();
        final Map<String, String> owner = new LinkedHashMap<>();
        final Map<String, Long> cooldownUntil = new HashMap<>();
    }

    private final String connectString;
    private final String cluster;
    private final Duration grace;
    private final Queue<NewPid> newPids = new ConcurrentLinkedQueue<>();
    private final List<Event> events = new CopyOnWriteArrayList<>();
    private final Map<ModuleKey, ModuleState> modules = new HashMap<>();
    private volatile Map<ModuleKey, Map<String, String>> published = Map.of();
    private volatile boolean connected = true;
    private volatile boolean closing;
    private FakeLeader leader;
    private ScheduledExecutorService loop;

    public FakeLeaderUnderTest(String connectString, String cluster, Duration grace) {
        this.connectString = connectString;
        this.cluster = cluster;
        this.grace = grace;
    }

    public static LeaderUnderTest.Factory factory() {
        return new LeaderUnderTest.Factory() {
            @Override
            public String name() {
                return "fake";
            }

            @Override
            public LeaderUnderTest create(String connectString, String cluster, Duration grace) {
                return new FakeLeaderUnderTest(connectString, cluster, grace);
            }
        };
    }

    @Override
    public synchronized void start() {
        if (leader != null) {
            throw new IllegalStateException("already started");
        }
        leader = new FakeLeader(connectString, cluster);
        leader.curator().getConnectionStateListenable().addListener((client, state) -> {
            connected = state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED;
            record("CONNECTION_" + state, null, null, null);
        });
        loop = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "fake-leader-" + cluster);
            t.setDaemon(true);
            return t;
        });
        loop.scheduleWithFixedDelay(this::tick, 0, TICK_MS, TimeUnit.MILLISECONDS);
        log.info("fake leader of {}: epoch {}, grace {} ms", cluster, leader.epoch(), grace.toMillis());
    }

    @Override
    public void addPids(ModuleKey module, Collection<String> pids) {
        for (String pid : pids) {
            newPids.add(new NewPid(module, pid));
        }
    }

    @Override
    public Duration grace() {
        return grace;
    }

    @Override
    public Map<String, String> assignments(ModuleKey module) {
        return published.getOrDefault(module, Map.of());
    }

    /** Every observation and decision so far, oldest first. */
    public List<Event> events() {
        return List.copyOf(events);
    }

    /** When the leader observed {@code instance}'s ephemeral node gone, if it did. */
    public Optional<Long> goneObservedAt(String instance) {
        return events.stream()
                .filter(e -> e.kind().equals("GONE") && instance.equals(e.instance()))
                .map(Event::atNanos)
                .findFirst();
    }

    @Override
    public synchronized void close() {
        closing = true;
        if (loop != null) {
            loop.shutdownNow();
            try {
                loop.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (leader != null) {
            leader.close();
        }
    }

    private void tick() {
        try {
            if (!connected) {
                return;
            }
            // every module with registrations is led, as the real leader watches all of /modules
            for (String name : modulesInZooKeeper()) {
                modules.computeIfAbsent(ModuleKey.parse(name), m -> new ModuleState());
            }
            for (NewPid p; (p = newPids.poll()) != null; ) {
                modules.computeIfAbsent(p.module(), m -> new ModuleState())
                        .pool
                        .put(p.pid(), FakeLeader.account("pw-" + p.pid(), 100));
            }
            for (Map.Entry<ModuleKey, ModuleState> e : modules.entrySet()) {
                if (!connected) {
                    return;
                }
                tick(e.getKey(), e.getValue());
            }
        } catch (RuntimeException e) {
            // a ZooKeeper call failed (connection trouble); the next tick starts over from ZooKeeper
            if (!closing) {
                log.warn("fake leader of {}: tick failed: {}", cluster, e.toString());
            }
        } finally {
            publish();
        }
    }

    private void tick(ModuleKey module, ModuleState state) {
        long now = System.nanoTime();
        List<String> live = leader.instances(module);
        // stamped after the answer: the node was already gone when ZooKeeper answered
        long observedAt = System.nanoTime();
        for (String id : live) {
            if (!state.instances.containsKey(id)) {
                leader.instance(module, id).ifPresent(instance -> {
                    state.instances.put(id, new Known(instance));
                    record("JOINED", module, id, null);
                });
            }
        }
        for (Map.Entry<String, Known> e : state.instances.entrySet()) {
            Known known = e.getValue();
            if (known.goneAt < 0 && !live.contains(e.getKey())) {
                known.goneAt = observedAt;
                record("GONE", module, e.getKey(), null, observedAt);
            }
            if (known.goneAt < 0 && !known.answered) {
                boolean alreadyAnswered = leader.instanceData(known.instance)
                        .map(d -> d.hasPidsPath())
                        .orElse(false);
                if (!alreadyAnswered) {
                    leader.handshake(known.instance);
                    record("HANDSHAKE", module, e.getKey(), null);
                }
                known.answered = true;
            }
        }
        readAnswers(module, state, now);
        freeAfterGrace(module, state, now);
        assignFree(module, state, now);
    }

    /** DELETED frees at once; a failed ADDING frees with a cooldown; a missing node frees. */
    private void readAnswers(ModuleKey module, ModuleState state, long now) {
        for (Map.Entry<String, String> e : List.copyOf(state.owner.entrySet())) {
            String pid = e.getKey();
            Known known = state.instances.get(e.getValue());
            Optional<PidNode> node = leader.read(known.instance, pid);
            if (node.isEmpty()) {
                state.owner.remove(pid);
                record("MISSING", module, e.getValue(), pid);
            } else if (node.get().state() == PidState.DELETED) {
                // this leader never writes DELETING, so every DELETED is a graceful close
                known.leaving = true;
                leader.remove(known.instance, pid);
                state.owner.remove(pid);
                record("RELEASED", module, e.getValue(), pid);
            } else if (node.get().state() == PidState.ADDING && node.get().hasError()) {
                leader.remove(known.instance, pid);
                state.owner.remove(pid);
                state.cooldownUntil.put(pid, now + FAILURE_COOLDOWN_NANOS);
                record("FAILED", module, e.getValue(), pid);
            }
        }
    }

    private void freeAfterGrace(ModuleKey module, ModuleState state, long now) {
        for (Map.Entry<String, Known> e : List.copyOf(state.instances.entrySet())) {
            Known known = e.getValue();
            if (known.goneAt < 0 || now - known.goneAt < grace.toNanos()) {
                continue;
            }
            for (Map.Entry<String, String> owned : List.copyOf(state.owner.entrySet())) {
                if (owned.getValue().equals(e.getKey())) {
                    if (leader.version(known.instance, owned.getKey()) >= 0) {
                        leader.remove(known.instance, owned.getKey());
                    }
                    state.owner.remove(owned.getKey());
                    record("FREED", module, e.getKey(), owned.getKey());
                }
            }
            removePidsNode(known.instance);
            state.instances.remove(e.getKey());
        }
    }

    private void assignFree(ModuleKey module, ModuleState state, long now) {
        List<Map.Entry<String, Known>> candidates = new ArrayList<>();
        for (Map.Entry<String, Known> e : state.instances.entrySet()) {
            if (e.getValue().goneAt < 0 && e.getValue().answered && !e.getValue().leaving) {
                candidates.add(e);
            }
        }
        if (candidates.isEmpty()) {
            return;
        }
        Map<String, Integer> counts = new HashMap<>();
        state.owner.values().forEach(id -> counts.merge(id, 1, Integer::sum));
        for (Map.Entry<String, AccountPayload> p : state.pool.entrySet()) {
            String pid = p.getKey();
            if (state.owner.containsKey(pid) || state.cooldownUntil.getOrDefault(pid, Long.MIN_VALUE) > now) {
                continue;
            }
            Map.Entry<String, Known> target = candidates.stream()
                    .min(Comparator.comparingInt((Map.Entry<String, Known> c) -> counts.getOrDefault(c.getKey(), 0))
                            .thenComparing(Map.Entry::getKey))
                    .orElseThrow();
            // owned before the write: if the write's outcome is unknown, the next tick reads the node
            state.owner.put(pid, target.getKey());
            counts.merge(target.getKey(), 1, Integer::sum);
            leader.add(target.getValue().instance, pid, p.getValue());
            record("ASSIGNED", module, target.getKey(), pid);
        }
    }

    private List<String> modulesInZooKeeper() {
        try {
            return leader.curator().getChildren().forPath(leader.layout().modules());
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new IllegalStateException("cannot list modules", e);
        }
    }

    private void removePidsNode(FakeLeader.Instance instance) {
        try {
            leader.curator().delete().deletingChildrenIfNeeded().forPath(instance.pidsPath());
        } catch (KeeperException.NoNodeException e) {
            // never created or already gone
        } catch (Exception e) {
            throw new IllegalStateException("cannot remove " + instance.pidsPath(), e);
        }
    }

    private void publish() {
        Map<ModuleKey, Map<String, String>> snapshot = new HashMap<>();
        modules.forEach((module, state) -> snapshot.put(module, Map.copyOf(state.owner)));
        published = Map.copyOf(snapshot);
    }

    private void record(String kind, ModuleKey module, String instance, String pid) {
        record(kind, module, instance, pid, System.nanoTime());
    }

    private void record(String kind, ModuleKey module, String instance, String pid, long atNanos) {
        Event event = new Event(kind, module == null ? null : module.toString(), instance, pid, atNanos);
        events.add(event);
        log.info(
                "fake leader of {}: {} {} {}", cluster, kind, instance == null ? "" : instance, pid == null ? "" : pid);
    }
}
