package io.pidpool.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.client.testing.RecordingListener;
import io.pidpool.client.testing.SdkHarness;
import io.pidpool.client.testing.SdkIT;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.net.ServerSocket;
import java.time.Duration;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/**
 * {@link PidClient#start()} connects the registration session while the quota side opens, but
 * creates the instance node only once the quota side is open: a Redis that cannot be reached fails
 * start() without the instance ever being visible to the leader (who would assign PIDs to it), and a
 * successful start() returns REGISTERED.
 */
class PidClientStartIT extends SdkIT {
    @Test
    void aRedisThatCannotBeReachedFailsStartBeforeTheInstanceRegisters() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        PidClient client = harness.builder(new RecordingListener())
                .redisAddress("redis://127.0.0.1:" + closedPort)
                .redisTimeout(Duration.ofMillis(300))
                .build();

        assertThatThrownBy(client::start).isInstanceOfSatisfying(PidPoolException.class, e -> assertThat(e.code())
                .isEqualTo(ErrorCode.UNAVAILABLE));
        assertThat(client.state()).isEqualTo(PidClient.State.CLOSED);
        // never registered: an instance node created and deleted again would leave the module node
        // with a children version above 0
        Stat module = leader.curator().checkExists().forPath(leader.layout().module(SdkHarness.MODULE));
        assertThat(module == null ? 0 : module.getCversion())
                .as("children ever created under the module")
                .isZero();
    }

    @Test
    void startReturnsRegisteredWithTheQuotaSide() {
        String redis = RedisSupport.sharedUrl();
        for (int i = 0; i < 5; i++) {
            try (PidClient client = harness.builder(new RecordingListener())
                    .redisAddress(redis)
                    .closeOnJvmExit(false)
                    .build()) {
                client.start();
                assertThat(client.state()).as("round %d", i).isEqualTo(PidClient.State.REGISTERED);
                assertThat(leader.instances(SdkHarness.MODULE)).hasSize(1);
            }
        }
    }
}
