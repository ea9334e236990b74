package io.pidpool.worker.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.worker.task.JdbiTaskStore;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.TaskSchema;
import io.pidpool.worker.task.TaskStatus;
import io.pidpool.worker.task.TaskStore;
import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.h2.jdbcx.JdbcDataSource;
import org.h2.tools.Server;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The shaded jar as an operator runs it: {@code java -jar target/pid-worker.jar --config ...}. */
class WorkerMainIT {
    private static final Path JAR = Path.of("target", "pid-worker.jar");

    private static Process launch(Path log, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-jar",
                JAR.toString()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }

    @Test
    void theStandaloneJarRunsTasksAndLeavesTheRingOnSigterm() throws Exception {
        Assumptions.assumeTrue(Files.exists(JAR), "run after mvn package: " + JAR.toAbsolutePath());
        Path dir = Files.createDirectories(Path.of("target", "worker-main-it"));
        System.setProperty("h2.bindAddress", "127.0.0.1");
        Server h2 = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
        String db = "mem:main" + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE)
                + ";DB_CLOSE_DELAY=-1";
        String url = "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/" + db;
        try (ZooKeeperFixture zk = new ZooKeeperFixture()) {
            Path yml = Files.writeString(
                    dir.resolve("worker.yml"),
                    """
                    cluster: mainit
                    group: default
                    instances: 2
                    zookeeper: { connect: "%s", sessionTimeoutMs: 4000 }
                    database: { url: "%s", maxPoolSize: 4 }
                    worker: { virtualNodes: 64, pollIntervalMs: 200, leaseMs: 10000, handlerTimeoutMs: 2000,
                              shutdownTimeoutMs: 5000 }
                    """
                            .formatted(zk.connectString(), url));
            Process worker = launch(dir.resolve("worker.log"), "--config", yml.toString());
            try (CuratorFramework client = zk.client(zk.port())) {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> client.checkExists().forPath("/pidpool/mainit/workers/default") != null
                                && client.getChildren()
                                                .forPath("/pidpool/mainit/workers/default")
                                                .size()
                                        == 2);

                StringWriter printed = new StringWriter();
                int rc = WorkerMain.run(
                        new String[] {
                            "--config",
                            yml.toString(),
                            "enqueue",
                            "--type",
                            "pidpool.log",
                            "--key",
                            "smoke",
                            "--body",
                            "{\"hello\":1}"
                        },
                        new PrintWriter(printed, true),
                        new PrintWriter(new StringWriter(), true));
                assertThat(rc).isZero();
                assertThat(printed.toString().strip()).isEqualTo("1");

                JdbcDataSource ds = new JdbcDataSource();
                ds.setURL(url);
                TaskSchema.migrate(ds);
                TaskStore store = JdbiTaskStore.create(ds);
                List<NewTask> tasks = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    tasks.add(NewTask.of("default", WorkerMain.LOG_TYPE, "k" + i, "{\"n\":" + i + "}"));
                }
                store.enqueueAll(tasks, Clock.systemUTC().instant());
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> store.countByStatus("default").getOrDefault(TaskStatus.DONE, 0L) == 51);

                worker.destroy(); // SIGTERM: graceful close
                assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(worker.exitValue()).as("exit code after SIGTERM").isZero();
                assertThat(client.getChildren().forPath("/pidpool/mainit/workers/default"))
                        .isEmpty();
                String log = Files.readString(dir.resolve("worker.log"));
                assertThat(log)
                        .contains("pid-worker ready")
                        .contains("key=smoke body={\"hello\":1}")
                        .contains("stopped: done=");
            } finally {
                worker.destroyForcibly();
            }
        } finally {
            h2.stop();
        }
        assertThat(new File(dir.toFile(), "worker.log")).exists();
    }
}
