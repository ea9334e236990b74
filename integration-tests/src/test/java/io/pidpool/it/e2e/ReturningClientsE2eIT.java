package io.pidpool.it.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.it.zk.ZooKeepers;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A ZooKeeper outage as the clients see it (docs/design.md §6.2, docs/outages.md): three real SDK
 * instances each reach ZooKeeper through a {@link BlackHoleProxy}; all three are cut for longer than
 * their session timeout, so every session expires and every client registers again under a new
 * instance id. Each names the instance it was, and the leader gives it that slot back: once settled,
 * no PID has changed hands, and the platform saw no double login.
 */
class ReturningClientsE2eIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");
    /** Long enough that the clients come back within it; the leader keeps their shares meanwhile. */
    static final Duration REBALANCE_DELAY = Duration.ofSeconds(60);

    private static TestingServer zookeeper;
    private final List<BlackHoleProxy> proxies = new ArrayList<>();
    private E2eWorld world;

    @BeforeAll
    static void startZooKeeper() {
        zookeeper = ZooKeepers.standalone();
    }

    @AfterAll
    static void stopZooKeeper() throws IOException {
        zookeeper.close();
    }

    @AfterEach
    void tearDown() {
        if (world != null) {
            world.close();
        }
        proxies.forEach(BlackHoleProxy::close);
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void clientsWhoseSessionsAllExpiredGetTheirOwnPidsBack() {
        world = new E2eWorld(zookeeper.getConnectString(), "returning", 1, UnaryOperator.identity(), REBALANCE_DELAY);
        int zkPort = Integer.parseInt(zookeeper
                .getConnectString()
                .substring(zookeeper.getConnectString().lastIndexOf(':') + 1));
        List<SdkInstance> instances = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            BlackHoleProxy proxy = BlackHoleProxy.to(zkPort);
            proxies.add(proxy);
            instances.add(world.instance(A, "a" + i, proxy.connectString()));
        }
        world.awaitAnswered(instances);
        List<String> pids = E2eWorld.pids("r", 30);
        world.leader.addPids(A, pids);
        world.awaitSettled(A, pids);
        Map<String, String> before = world.holders(A);
        Map<String, String> idsBefore = new TreeMap<>();
        instances.forEach(i ->
                idsBefore.put(i.name(), i.client().registration().orElseThrow().instanceId()));

        proxies.forEach(BlackHoleProxy::blackHole);
        // every session expires (T after the last heartbeat reached the server) ...
        sleep(E2eWorld.SDK_T.plusSeconds(3));
        // ... and they come back one by one in the opposite order of their slots (a2 first), so that
        // a joiner taking the first vacancy would take another's; each names the instance it was
        long heal = System.nanoTime();
        for (int i = instances.size() - 1; i >= 0; i--) {
            SdkInstance instance = instances.get(i);
            proxies.get(i).restore();
            await(instance.name() + " registered again under a new instance id")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> instance.client()
                            .registration()
                            .map(r -> r.handshakeDone() && !r.instanceId().equals(idsBefore.get(instance.name())))
                            .orElse(false));
        }
        world.awaitSettled(A, pids);
        long settledMs = Duration.ofNanos(System.nanoTime() - heal).toMillis();

        Map<String, String> after = world.holders(A);
        long moved = pids.stream()
                .filter(pid -> !before.get(pid).equals(after.get(pid)))
                .count();
        world.note("PIDs that changed holder after all 3 sessions expired", moved + " of " + pids.size());
        world.timing(
                "settled again after the heal", Duration.ofMillis(settledMs).toNanos());
        assertThat(moved).as("PIDs that changed holder (of %d)", pids.size()).isZero();
        world.assertSafety();
    }
}
