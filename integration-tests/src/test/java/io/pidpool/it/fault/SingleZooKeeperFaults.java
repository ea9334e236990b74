package io.pidpool.it.fault;

import io.pidpool.it.zk.ZooKeepers;
import java.io.IOException;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * What the fault scenarios on one ZooKeeper server share: the server (one per test class), the four
 * PIDs two clients split, and the {@link FaultWorld} each test opens and this class closes.
 */
abstract class SingleZooKeeperFaults {
    static final List<String> PIDS = List.of("p1", "p2", "p3", "p4");
    static TestingServer zookeeper;
    FaultWorld world;

    @BeforeAll
    static void startZooKeeper() {
        zookeeper = ZooKeepers.standalone();
    }

    @AfterAll
    static void stopZooKeeper() throws IOException {
        zookeeper.close();
    }

    @AfterEach
    void closeWorld() {
        if (world != null) {
            world.close();
            world = null;
        }
    }
}
