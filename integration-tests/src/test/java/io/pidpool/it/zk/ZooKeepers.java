package io.pidpool.it.zk;

import io.pidpool.client.testing.TestZooKeeper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;

/**
 * Real ZooKeeper for the scenarios, always on 127.0.0.1 with a 100 ms tick (sessions from 200 ms to
 * 60 s may be negotiated), plus the server-side faults the scenarios inject.
 */
public final class ZooKeepers {
    private ZooKeepers() {}

    /** One standalone server (see the SDK's {@link TestZooKeeper}). */
    public static TestingServer standalone() {
        return TestZooKeeper.start();
    }

    /** A started ensemble of {@code size} servers, every port on loopback. */
    public static TestingCluster ensemble(int size) {
        try {
            Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
            List<InstanceSpec> specs = new ArrayList<>();
            for (int id = 1; id <= size; id++) {
                specs.add(new InstanceSpec(
                        null,
                        -1,
                        -1,
                        -1,
                        true,
                        id,
                        TestZooKeeper.TICK_MS,
                        -1,
                        Map.of("clientPortAddress", "127.0.0.1", "maxSessionTimeout", "60000"),
                        "127.0.0.1"));
            }
            TestingCluster cluster = new TestingCluster(specs);
            cluster.start();
            return cluster;
        } catch (Exception e) {
            throw new IllegalStateException("cannot start a ZooKeeper ensemble", e);
        }
    }

    /**
     * The ensemble member that is ZooKeeper's leader right now (asked with the {@code srvr}
     * four-letter word, which ZooKeeper allows by default).
     */
    public static Optional<InstanceSpec> ensembleLeader(TestingCluster cluster) {
        for (InstanceSpec spec : cluster.getInstances()) {
            if (srvr(spec.getPort()).contains("Mode: leader")) {
                return Optional.of(spec);
            }
        }
        return Optional.empty();
    }

    /** The answer to {@code srvr} on {@code 127.0.0.1:port}, or an empty string if the server does not answer. */
    public static String srvr(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
            socket.setSoTimeout(2_000);
            OutputStream out = socket.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            StringBuilder answer = new StringBuilder();
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            for (String line; (line = in.readLine()) != null; ) {
                answer.append(line).append('\n');
            }
            return answer.toString();
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * Makes the ZooKeeper server (running in this JVM) close session {@code sessionId} itself, as it
     * does when a session times out: it deletes the session's ephemeral nodes and drops its
     * connection; the client learns that its session expired when it reconnects. Uses the server's
     * own JMX operation ({@code ConnectionMXBean.terminateSession}, i.e. {@code
     * ZooKeeperServer.closeSession}). Returns false if no connection of that session was found.
     */
    public static boolean terminateSession(long sessionId) {
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        String wanted = "0x" + Long.toHexString(sessionId);
        try {
            for (ObjectName name : jmx.queryNames(new ObjectName("org.apache.ZooKeeperService:*"), null)) {
                if (!name.getKeyPropertyList().containsValue(wanted)) {
                    continue;
                }
                Object id = jmx.getAttribute(name, "SessionId");
                if (wanted.equals(id)) {
                    jmx.invoke(name, "terminateSession", new Object[0], new String[0]);
                    return true;
                }
            }
            return false;
        } catch (Exception e) {
            throw new IllegalStateException("cannot terminate session " + wanted + " through JMX", e);
        }
    }

    /** Restarts a killed ensemble member. */
    public static void restart(TestingCluster cluster, InstanceSpec member) {
        try {
            cluster.restartServer(member);
        } catch (Exception e) {
            throw new IllegalStateException("cannot restart ZooKeeper server " + member.getServerId(), e);
        }
    }

    /** Kills an ensemble member (its port closes; its clients are disconnected). */
    public static void kill(TestingCluster cluster, InstanceSpec member) {
        try {
            if (!cluster.killServer(member)) {
                throw new IllegalStateException("no ZooKeeper server " + member.getServerId() + " to kill");
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot kill ZooKeeper server " + member.getServerId(), e);
        }
    }
}
