package io.pidpool.client.testing;

import static org.awaitility.Awaitility.await;

import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One test's world: a fresh cluster name on a shared ZooKeeper, a {@link FakeLeader} for it, and
 * the clients and proxies the test creates, all closed by {@link #close()}.
 */
public final class SdkHarness implements AutoCloseable {
    public static final ModuleKey MODULE = ModuleKey.parse("fin#risk#scorer");
    public static final Duration WAIT = Duration.ofSeconds(15);
    private static final AtomicInteger CLUSTERS = new AtomicInteger();

    private final String connectString;
    private final String cluster;
    private final FakeLeader leader;
    private final List<PidClient> clients = new ArrayList<>();
    private final List<BlackHoleProxy> proxies = new ArrayList<>();

    public SdkHarness(String connectString) {
        this.connectString = connectString;
        this.cluster = "c" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
        this.leader = new FakeLeader(connectString, cluster);
    }

    public FakeLeader leader() {
        return leader;
    }

    public String cluster() {
        return cluster;
    }

    public String connectString() {
        return connectString;
    }

    /** A loopback proxy in front of ZooKeeper, closed with the harness. */
    public BlackHoleProxy proxy() {
        int port = Integer.parseInt(connectString.substring(connectString.lastIndexOf(':') + 1));
        BlackHoleProxy proxy = BlackHoleProxy.to(port);
        proxies.add(proxy);
        return proxy;
    }

    /** A builder for this cluster and {@link #MODULE}, instance prefix {@code box}, T = 4 s. */
    public PidClient.Builder builder(PidListener listener) {
        return PidClient.builder()
                .connectString(connectString)
                .cluster(cluster)
                .module(MODULE.toString())
                .instanceId("box")
                .host("test-host")
                .secretOpener(TestSecrets.opener())
                .sessionTimeout(Duration.ofSeconds(4))
                .startTimeout(Duration.ofSeconds(20))
                .listener(listener);
    }

    /** Builds and starts a client; it is closed with the harness. */
    public PidClient start(PidClient.Builder builder) {
        PidClient client = builder.build();
        clients.add(client);
        client.start();
        return client;
    }

    /** The leader's view of the client's current registration. */
    public FakeLeader.Instance instanceOf(PidClient client) {
        String id = client.registration().orElseThrow().instanceId();
        return leader.instance(MODULE, id).orElseThrow(() -> new AssertionError("no instance node for " + id));
    }

    /** Answers the client's registration and waits until the client watches its PIDs path. */
    public FakeLeader.Instance handshake(PidClient client) {
        FakeLeader.Instance instance = leader.handshake(instanceOf(client));
        await().atMost(WAIT).until(() -> client.registration()
                .map(r -> r.pidsPath().equals(instance.pidsPath()))
                .orElse(false));
        return instance;
    }

    /** Waits until the node of {@code pid} is in {@code state}. */
    public void awaitState(FakeLeader.Instance instance, String pid, PidState state) {
        await().atMost(WAIT).until(() -> leader.state(instance, pid).equals(Optional.of(state)));
    }

    /** Adds {@code pids} (password {@code pw-<pid>}, quota 100) and waits until all are ADDED. */
    public void addAndAwait(FakeLeader.Instance instance, String... pids) {
        for (String pid : pids) {
            leader.add(instance, pid, FakeLeader.account("pw-" + pid, 100));
        }
        for (String pid : pids) {
            awaitState(instance, pid, PidState.ADDED);
        }
    }

    @Override
    public void close() {
        for (PidClient client : clients) {
            client.close();
        }
        for (BlackHoleProxy proxy : proxies) {
            proxy.close();
        }
        leader.close();
    }
}
