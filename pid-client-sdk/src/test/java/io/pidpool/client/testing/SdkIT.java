package io.pidpool.client.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The fixture the SDK's ZooKeeper ITs share: one ZooKeeper server per class, a fresh harness with its
 * fake leader per test, and a recording listener whose protocol violations fail the test after the
 * harness closed (revocations on close count too).
 */
public abstract class SdkIT {
    protected static TestingServer zookeeper;

    protected SdkHarness harness;
    protected FakeLeader leader;
    protected RecordingListener listener;

    @BeforeAll
    static void startZooKeeper() {
        zookeeper = TestZooKeeper.start();
    }

    @AfterAll
    static void stopZooKeeper() throws IOException {
        zookeeper.close();
    }

    @BeforeEach
    void openHarness() {
        harness = new SdkHarness(zookeeper.getConnectString());
        leader = harness.leader();
        listener = newListener();
    }

    @AfterEach
    void closeHarness() {
        harness.close();
        assertThat(listener.violations()).isEmpty();
        afterClose();
    }

    /** The test's listener; override to record into a fake platform. */
    protected RecordingListener newListener() {
        return new RecordingListener();
    }

    /** Further checks once the harness is closed. */
    protected void afterClose() {}
}
