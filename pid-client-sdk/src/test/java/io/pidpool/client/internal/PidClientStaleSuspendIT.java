package io.pidpool.client.internal;

import static io.pidpool.client.testing.SdkHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.PidClient;
import io.pidpool.client.Registration;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.PlatformSdkIT;
import io.pidpool.client.testing.RecordingListener.Kind;
import io.pidpool.client.testing.SdkHarness;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFaults;
import org.apache.curator.framework.state.ConnectionState;
import org.junit.jupiter.api.Test;

/**
 * A SUSPENDED that Curator posts on a healthy connection (a background operation that gave up on an
 * earlier connection loss, CURATOR-525) must not cost the session: left alone, Curator stays SUSPENDED
 * and injects a session expiration after the session timeout (CI: PidClientConnectionIT registered a
 * third session 2 s after the second one and never took up the PID added on the second).
 */
class PidClientStaleSuspendIT extends PlatformSdkIT {
    @Test
    void aSuspendedOnAHealthyConnectionRevokesButKeepsTheSessionAndCuratorSeesTheConnectionAgain() {
        PidClient client = harness.start(harness.builder(listener).sessionTimeout(Duration.ofSeconds(2)));
        FakeLeader.Instance instance = harness.handshake(client);
        harness.addAndAwait(instance, "p1");
        Registration before = client.registration().orElseThrow();
        CuratorFramework curator = ((DefaultPidClient) client).curator();
        List<ConnectionState> states = new CopyOnWriteArrayList<>();
        curator.getConnectionStateListenable().addListener((c, state) -> states.add(state));

        CuratorFaults.backgroundOperationGaveUpOnConnectionLoss(curator);

        // Curator leaves SUSPENDED (so it never injects an expiration) and the PID is taken up again
        await().atMost(WAIT).until(() -> states.contains(ConnectionState.RECONNECTED));
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1")));
        assertThat(states).containsExactly(ConnectionState.SUSPENDED, ConnectionState.RECONNECTED);
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.REVOKED, Kind.ASSIGNED);
        Registration after = client.registration().orElseThrow();
        assertThat(after.sessionId()).isEqualTo(before.sessionId());
        assertThat(after.instanceId()).isEqualTo(before.instanceId());
        assertThat(leader.instances(SdkHarness.MODULE)).containsExactly(before.instanceId());

        harness.addAndAwait(instance, "p2"); // and the session goes on answering
        assertThat(client.heldPids()).containsExactlyInAnyOrder("p1", "p2");
        assertThat(states).doesNotContain(ConnectionState.LOST);
    }
}
