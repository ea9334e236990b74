package io.pidpool.server.testing;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.ZkLayout;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.KillSession;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A test-only stand-in for the SDK: registers per docs/design.md §4, watches its pids node and answers every
 * instruction at once (ADDING → login on the {@link Platform} → ADDED, DELETING → logout → DELETED,
 * UPDATING → UPDATED), acting only on nodes stamped with its own session and an epoch not older than
 * the newest it has seen. Malformed nodes are ignored (and whatever was held stays held).
 *
 * <p>Concurrency: all protocol handling runs on one thread per instance.
 */
public final class SimulatedInstance implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SimulatedInstance.class);

    /** One callback the instance made, with its monotonic time. */
    public record Event(String pid, String kind, long nanos) {}

    private final CuratorFramework client;
    private final ZkLayout layout;
    private final ModuleKey module;
    private final String prefix;
    private final Platform platform;
    private final ExecutorService thread;
    private final ScheduledExecutorService heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sim-heartbeat");
        t.setDaemon(true);
        return t;
    });
    private final Set<String> held = ConcurrentHashMap.newKeySet();
    private final Set<String> failing = ConcurrentHashMap.newKeySet();
    private final List<Event> events = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> assignedCount = new ConcurrentHashMap<>();
    private volatile boolean answerAdding = true;
    private volatile boolean dead;
    private volatile boolean suspended;
    private long sessionId;
    private InstanceId id;
    private long maxEpoch;
    private CuratorCache self;
    private CuratorCache pids;

    public SimulatedInstance(
            String connectString, ZkLayout layout, ModuleKey module, String prefix, Platform platform) {
        this.layout = layout;
        this.module = module;
        this.prefix = prefix;
        this.platform = platform;
        this.client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .namespace(layout.namespace())
                .sessionTimeoutMs(2_000)
                .connectionTimeoutMs(5_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "sim-" + prefix);
            t.setDaemon(true);
            return t;
        });
    }

    /** Connects and registers; returns once the ephemeral node exists. */
    public SimulatedInstance start() {
        try {
            client.start();
            if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("sim " + prefix + " could not connect");
            }
            sessionId = client.getZookeeperClient().getZooKeeper().getSessionId();
            id = InstanceId.of(prefix + "-" + Long.toHexString(sessionId));
            client.getConnectionStateListenable().addListener((c, s) -> onState(s), thread);
            String path = layout.instance(module, id);
            client.create()
                    .creatingParentContainersIfNeeded()
                    .withMode(CreateMode.EPHEMERAL)
                    .forPath(path, InstanceNode.registering(1, "sim").encode());
            self = CuratorCache.build(client, path, CuratorCache.Options.SINGLE_NODE_CACHE);
            self.listenable()
                    .addListener(
                            CuratorCacheListener.builder()
                                    .forCreatesAndChanges((old, node) -> onSelf(node))
                                    .build(),
                            thread);
            self.start();
            // like the SDK: a cheap request every T/6, so a session killed on the server is noticed
            // at once (the ZooKeeper client itself only pings after T/3 of silence)
            heartbeat.scheduleWithFixedDelay(this::heartbeat, 333, 333, TimeUnit.MILLISECONDS);
            return this;
        } catch (Exception e) {
            throw new IllegalStateException("sim " + prefix + " could not start", e);
        }
    }

    private void heartbeat() {
        if (dead) {
            return;
        }
        try {
            client.checkExists().forPath(layout.instance(module, id));
        } catch (Exception e) {
            thread.execute(() -> onState(ConnectionState.SUSPENDED));
        }
    }

    private void onSelf(ChildData node) {
        if (pids != null || dead) {
            return;
        }
        InstanceNode data;
        try {
            data = InstanceNode.decode(node.getData());
        } catch (PidPoolException e) {
            log.warn("sim {}: unreadable own node: {}", id, e.getMessage());
            return;
        }
        if (!data.hasPidsPath()) {
            return;
        }
        pids = CuratorCache.build(client, data.pidsPath());
        pids.listenable()
                .addListener(
                        CuratorCacheListener.builder()
                                .forCreatesAndChanges((old, child) -> onPid(child))
                                .forDeletes(child -> onPidGone(child.getPath()))
                                .build(),
                        thread);
        pids.start();
    }

    private void onPid(ChildData child) {
        if (dead || suspended || child.getPath().equals(layout.pids(module, id))) {
            return;
        }
        handle(child.getPath(), child.getData(), child.getStat().getVersion());
    }

    private void handle(String path, byte[] data, int version) {
        PidNode node;
        try {
            node = PidNode.decode(data);
        } catch (PidPoolException e) {
            log.info("sim {}: ignoring malformed node {}", id, path);
            return;
        }
        if (node.ownerSessionId() != sessionId || node.epoch().value() < maxEpoch) {
            return;
        }
        maxEpoch = Math.max(maxEpoch, node.epoch().value());
        String pid = node.pidId();
        switch (node.state()) {
            case ADDING -> {
                if (node.hasError() || !answerAdding) {
                    return;
                }
                if (failing.contains(pid)) {
                    events.add(new Event(pid, "FAILED", System.nanoTime()));
                    answer(path, node.failed("login refused"), version);
                    return;
                }
                platform.login(pid, id.value());
                held.add(pid);
                assignedCount.merge(pid, 1, Integer::sum);
                events.add(new Event(pid, "ASSIGNED", System.nanoTime()));
                answer(path, node.acknowledged(), version);
            }
            case UPDATING -> {
                if (!node.hasError()) {
                    events.add(new Event(pid, "UPDATED", System.nanoTime()));
                    answer(path, node.acknowledged(), version);
                }
            }
            case DELETING -> {
                revoke(pid);
                answer(path, node.acknowledged(), version);
            }
            case ADDED, UPDATED, DELETED -> {}
        }
    }

    private void revoke(String pid) {
        if (held.remove(pid)) {
            platform.logout(pid, id.value());
            events.add(new Event(pid, "REVOKED", System.nanoTime()));
        }
    }

    private void answer(String path, PidNode answer, int version) {
        try {
            client.setData().withVersion(version).forPath(path, answer.encode());
        } catch (KeeperException.NoNodeException e) {
            revoke(answer.pidId()); // the instruction is gone: do not keep what it gave
        } catch (KeeperException.BadVersionException e) {
            try {
                Stat stat = new Stat();
                byte[] again = client.getData().storingStatIn(stat).forPath(path);
                handle(path, again, stat.getVersion());
            } catch (Exception other) {
                revoke(answer.pidId());
            }
        } catch (Exception e) {
            log.info("sim {}: could not answer {}: {}", id, path, e.toString());
        }
    }

    private void onPidGone(String path) {
        // the leader removes nodes after DELETED; a node removed while held means: stop using it
        String pid = path.substring(path.lastIndexOf('/') + 1);
        revoke(pid);
    }

    /** docs/design.md §4: SUSPENDED revokes everything at once; RECONNECTED (same session) takes ADDED nodes up again. */
    private void onState(ConnectionState state) {
        events.add(new Event("-", "STATE:" + state + (dead ? "(dead)" : ""), System.nanoTime()));
        if (dead) {
            return;
        }
        switch (state) {
            case SUSPENDED -> {
                suspended = true;
                Set.copyOf(held).forEach(this::revoke);
            }
            case RECONNECTED -> {
                long now = sessionOf(client);
                if (now != sessionId) {
                    dead = true; // a new session is a new instance; this one is over
                    return;
                }
                suspended = false;
                if (pids != null) {
                    pids.stream().forEach(child -> {
                        try {
                            PidNode node = PidNode.decode(child.getData());
                            if (node.ownerSessionId() == sessionId
                                    && (node.state() == PidState.ADDED || node.state() == PidState.UPDATED)
                                    && held.add(node.pidId())) {
                                platform.login(node.pidId(), id.value());
                                events.add(new Event(node.pidId(), "ASSIGNED", System.nanoTime()));
                            }
                        } catch (RuntimeException e) {
                            // the pids node itself, or junk
                        }
                    });
                }
            }
            case LOST -> {
                dead = true;
                Set.copyOf(held).forEach(this::revoke);
            }
            default -> {}
        }
    }

    private static long sessionOf(CuratorFramework client) {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return -1;
        }
    }

    // ---------------------------------------------------------------- test controls

    public InstanceId id() {
        return id;
    }

    public long sessionId() {
        return sessionId;
    }

    public ModuleKey module() {
        return module;
    }

    public Set<String> held() {
        return Set.copyOf(held);
    }

    public List<Event> events() {
        return List.copyOf(events);
    }

    /** How often each PID was assigned to this instance. */
    public Map<String, Integer> assignedCount() {
        return Map.copyOf(assignedCount);
    }

    /** Makes onAssigned "throw" for this PID: the instance answers with an error. */
    public void failOn(String pid) {
        failing.add(pid);
    }

    /** Stops answering ADDING (the handoff stays in the middle). */
    public void holdBackAdds() {
        answerAdding = false;
    }

    public CuratorFramework curator() {
        return client;
    }

    /**
     * Kills the session on the server (another connection with the same session id closes it): the
     * ephemeral node disappears at once, as after a session expiry, and this instance learns of it
     * only when it next hears from ZooKeeper.
     */
    public void killSession() throws Exception {
        KillSession.kill(client.getZookeeperClient().getZooKeeper());
    }

    /** The process dies: it holds nothing any more, and says nothing to anybody. */
    public void crash() {
        dead = true;
        platform.forget(id.value());
        held.clear();
        shutdown();
    }

    private void shutdown() {
        heartbeat.shutdownNow();
        thread.shutdownNow();
        if (pids != null) {
            pids.close();
        }
        if (self != null) {
            self.close();
        }
        client.close();
    }

    /** A graceful close: revoke everything, answer DELETED in each node, then leave. */
    @Override
    public void close() {
        if (dead) {
            shutdown();
            return;
        }
        try {
            thread.submit(() -> {
                        dead = true;
                        for (String pid : Set.copyOf(held)) {
                            revoke(pid);
                            String path = layout.pid(module, id, pid);
                            try {
                                Stat stat = new Stat();
                                byte[] data =
                                        client.getData().storingStatIn(stat).forPath(path);
                                PidNode node = PidNode.decode(data);
                                if (node.state().isInstruction() || node.state() == PidState.DELETED) {
                                    continue;
                                }
                                PidNode deleted = new PidNode(
                                        pid, PidState.DELETED, node.epoch(), node.ownerSessionId(), node.account(), "");
                                client.setData().withVersion(stat.getVersion()).forPath(path, deleted.encode());
                            } catch (Exception e) {
                                log.info("sim {}: could not release {}: {}", id, pid, e.toString());
                            }
                        }
                        client.delete().quietly().forPath(layout.instance(module, id));
                        return null;
                    })
                    .get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.warn("sim {}: unclean close: {}", id, e.toString());
        }
        shutdown();
    }
}
