package io.pidpool.worker.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.worker.task.JdbiTaskStore;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.TaskSchema;
import io.pidpool.worker.task.TaskStatus;
import io.pidpool.worker.task.TaskStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.h2.jdbcx.JdbcDataSource;
import org.h2.tools.Server;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * pid-worker.jar against a secured ensemble: {@code zookeeper.auth} (here from {@code
 * PIDPOOL_ZOOKEEPER_AUTH}) gives its nodes the servers' digest ACL ({@link ZkAuth}, as pid-server
 * builds its client), a pid-server's in-process worker with the same identity shares the ring with
 * it, and a worker without or with another identity stops at start-up with the key to fix, having
 * written nothing.
 */
class WorkerZkAuthIT {
    private static final Path JAR = Path.of("target", "pid-worker.jar");
    private static final String CLUSTER = "secure";
    private static final String GROUP = "default";
    private static final String RIGHT = "pidpool:right-secret";
    private static final ZkAuth SERVERS = ZkAuth.of(RIGHT);

    @Test
    void onlyTheClustersIdentityJoinsAndItsNodesCarryTheDigestAcl() throws Exception {
        Assumptions.assumeTrue(Files.exists(JAR), "run after mvn package: " + JAR.toAbsolutePath());
        Path dir = Files.createDirectories(Path.of("target", "worker-zk-auth-it"));
        System.setProperty("h2.bindAddress", "127.0.0.1");
        Server h2 = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
        String url = "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:auth"
                + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE) + ";DB_CLOSE_DELAY=-1";
        Path log = dir.resolve("worker.log");
        try (ZooKeeperFixture zk = new ZooKeeperFixture();
                CuratorFramework admin = client(zk, SERVERS, null);
                CuratorFramework outsider = client(zk, ZkAuth.none(), null);
                CuratorFramework impostor = client(zk, ZkAuth.of("pidpool:wrong-secret"), null)) {
            String group = "/pidpool/" + CLUSTER + "/workers/" + GROUP;
            // 1. the standalone worker first, on an empty ensemble, with the identity from the environment
            Path yml = Files.writeString(dir.resolve("worker.yml"), config(zk, url, ""));
            Process worker = launch(log, yml, Map.of("PIDPOOL_ZOOKEEPER_AUTH", RIGHT));
            try {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> admin.checkExists().forPath(group) != null
                                && admin.getChildren().forPath(group).size() == 1);
                String member = group + "/" + admin.getChildren().forPath(group).get(0);

                // every node it created has the servers' ACL, /pidpool the shared one
                var servers = SERVERS.aclProvider("pidpool/" + CLUSTER);
                for (String path :
                        List.of("/pidpool", "/pidpool/" + CLUSTER, "/pidpool/" + CLUSTER + "/workers", group, member)) {
                    assertThat(admin.getACL().forPath(path)).as(path).isEqualTo(servers.getAclForPath(path));
                }
                assertThat(admin.getACL().forPath(member)).isEqualTo(SERVERS.acl());
                for (CuratorFramework stranger : List.of(outsider, impostor)) {
                    assertThatThrownBy(() -> stranger.getData().forPath(member))
                            .isInstanceOf(KeeperException.NoAuthException.class);
                    assertThatThrownBy(() -> stranger.getChildren().forPath(group))
                            .isInstanceOf(KeeperException.NoAuthException.class);
                    assertThatThrownBy(() -> stranger.delete().forPath(member))
                            .isInstanceOf(KeeperException.NoAuthException.class);
                }

                // 2. a pid-server's in-process worker (its client built as PidServer builds it) joins the same ring
                JdbcDataSource ds = new JdbcDataSource();
                ds.setURL(url);
                TaskSchema.migrate(ds); // done by the jar before it joined the ring; idempotent
                Set<Long> ranByServer = ConcurrentHashMap.newKeySet();
                try (CuratorFramework serverClient = client(zk, SERVERS, "pidpool/" + CLUSTER);
                        WorkerPool serverWorker = WorkerPool.builder()
                                .curator(serverClient)
                                .cluster(CLUSTER)
                                .group(GROUP)
                                .memberId("server-1")
                                .dataSource(ds)
                                .migrateSchema(false)
                                .handler(WorkerMain.LOG_TYPE, task -> ranByServer.add(task.id()))
                                .config(workerConfig())
                                .build()
                                .start()) {
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> serverWorker.ring().members().size() == 2);

                    TaskStore store = JdbiTaskStore.create(ds);
                    List<NewTask> tasks = new ArrayList<>();
                    for (int i = 0; i < 60; i++) {
                        tasks.add(NewTask.of(GROUP, WorkerMain.LOG_TYPE, "k" + i, "{\"n\":" + i + "}"));
                    }
                    store.enqueueAll(tasks, Clock.systemUTC().instant());
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> store.countByStatus(GROUP).getOrDefault(TaskStatus.DONE, 0L) == 60);
                    // both members ran some: the standalone worker the rest of the 60
                    assertThat(ranByServer).isNotEmpty().hasSizeLessThan(60);
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> Files.readString(log).contains("[" + WorkerMain.LOG_TYPE + "] key=k"));

                    // 3. without authentication, then with another password: refused, nothing written
                    Stat namespaceBefore = admin.checkExists().forPath("/pidpool/" + CLUSTER);
                    Stat groupBefore = admin.checkExists().forPath(group);
                    List<String> membersBefore = admin.getChildren().forPath(group);
                    assertRefused(
                            zk,
                            "",
                            "ZooKeeper denied reading /pidpool/" + CLUSTER + " (NoAuth): the cluster is secured;"
                                    + " set zookeeper.auth (or PIDPOOL_ZOOKEEPER_AUTH)");
                    assertRefused(
                            zk,
                            "pidpool:wrong-secret",
                            "ZooKeeper denied digest user 'pidpool' reading /pidpool/" + CLUSTER
                                    + " (NoAuth): zookeeper.auth (or PIDPOOL_ZOOKEEPER_AUTH) must be");
                    assertThat(admin.getChildren().forPath(group)).isEqualTo(membersBefore);
                    assertThat(admin.checkExists().forPath(group).getCversion()).isEqualTo(groupBefore.getCversion());
                    assertThat(admin.checkExists().forPath("/pidpool/" + CLUSTER))
                            .isEqualTo(namespaceBefore);
                }

                // 4. SIGTERM: it removes its node (it may delete what it created)
                worker.destroy();
                assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> admin.getChildren().forPath(group).isEmpty());
                assertThat(Files.readString(log))
                        .contains("pid-worker ready")
                        .contains("zookeeper.auth=digest user pidpool")
                        .doesNotContain("right-secret");
            } finally {
                worker.destroyForcibly();
            }
        } finally {
            h2.stop();
        }
    }

    /**
     * Runs the main in this JVM with {@code auth} against the secured cluster: exit 2 with {@code
     * message}, the password not repeated, and the (fresh) task database left without tables.
     */
    private static void assertRefused(ZooKeeperFixture zk, String auth, String message) throws Exception {
        String db = "jdbc:h2:mem:refused" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
        try (Connection keepAlive = DriverManager.getConnection(db)) {
            Path yml = Files.createTempFile(Path.of("target", "worker-zk-auth-it"), "refused", ".yml");
            Files.writeString(yml, config(zk, db, auth));
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            // on its own daemon thread: a worker that wrongly starts would block until SIGTERM
            CompletableFuture<Integer> exit = new CompletableFuture<>();
            Thread main = new Thread(
                    () -> {
                        try {
                            exit.complete(WorkerMain.run(
                                    new String[] {"--config", yml.toString()},
                                    new PrintWriter(out, true),
                                    new PrintWriter(err, true)));
                        } catch (Throwable t) {
                            exit.completeExceptionally(t);
                        }
                    },
                    "refused-worker");
            main.setDaemon(true);
            main.start();
            int rc = exit.get(30, TimeUnit.SECONDS);
            assertThat(rc).as(err.toString()).isEqualTo(2);
            assertThat(err.toString())
                    .contains(message)
                    .contains("[zookeeper.auth]")
                    .doesNotContain("wrong-secret");
            assertThat(WorkerFileConfigTest.publicTables(keepAlive))
                    .as("task table not created")
                    .isEmpty();
        }
    }

    private static String config(ZooKeeperFixture zk, String dbUrl, String auth) {
        return """
                cluster: %s
                group: %s
                zookeeper: { connect: "%s", sessionTimeoutMs: 4000, auth: "%s" }
                database: { url: "%s", maxPoolSize: 4 }
                worker: { virtualNodes: 64, pollIntervalMs: 200, leaseMs: 10000, handlerTimeoutMs: 2000,
                          shutdownTimeoutMs: 5000 }
                """
                .formatted(CLUSTER, GROUP, zk.connectString(), auth, dbUrl);
    }

    private static WorkerConfig workerConfig() {
        return WorkerConfig.builder()
                .virtualNodes(64)
                .pollInterval(Duration.ofMillis(200))
                .lease(Duration.ofSeconds(10))
                .handlerTimeout(Duration.ofSeconds(2))
                .shutdownTimeout(Duration.ofSeconds(5))
                .build();
    }

    private static Process launch(Path log, Path yml, Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx128m",
                        "-jar",
                        JAR.toString(),
                        "--config",
                        yml.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().putAll(env);
        return pb.start();
    }

    /** A started client with {@code auth}, as pid-server configures its own ({@link ZkAuth#configure}). */
    private static CuratorFramework client(ZooKeeperFixture zk, ZkAuth auth, String namespace) throws Exception {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(zk.connectString())
                .sessionTimeoutMs(4000)
                .retryPolicy(new RetryOneTime(100));
        if (namespace != null) {
            b.namespace(namespace);
        }
        CuratorFramework c = auth.configure(b, "pidpool/" + CLUSTER).build();
        c.start();
        assertThat(c.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
        return c;
    }
}
