package io.pidpool.worker.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.error.PidPoolException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkerFileConfigTest {
    @TempDir
    Path dir;

    private Path yaml(String text) throws Exception {
        return Files.writeString(dir.resolve("worker.yml"), text);
    }

    @Test
    void fileValuesOverDefaultsAndEnvironmentOverFile() throws Exception {
        Path f = yaml(
                """
                cluster: prod
                group: ledger
                instances: 2
                zookeeper: { connect: "zk1:2181", sessionTimeoutMs: 4000 }
                database: { url: "jdbc:h2:mem:x", user: sa }
                worker: { batchSize: 50, pollIntervalMs: 250 }
                """);
        WorkerFileConfig c = WorkerFileConfig.load(
                f,
                Map.of("PIDPOOL_ZOOKEEPER_CONNECT", "zk9:2181", "PIDPOOL_WORKER_LEASE_MS", "60000", "HOME", "/root"));
        assertThat(c.cluster).isEqualTo("prod");
        assertThat(c.group).isEqualTo("ledger");
        assertThat(c.instances).isEqualTo(2);
        assertThat(c.zookeeper.connect).isEqualTo("zk9:2181");
        assertThat(c.zookeeper.sessionTimeoutMs).isEqualTo(4000);
        assertThat(c.database.user).isEqualTo("sa");
        WorkerConfig w = c.workerConfig();
        assertThat(w.batchSize()).isEqualTo(50);
        assertThat(w.pollInterval()).isEqualTo(Duration.ofMillis(250));
        assertThat(w.lease()).isEqualTo(Duration.ofMinutes(1));
        assertThat(w.virtualNodes()).isEqualTo(WorkerConfig.defaults().virtualNodes());
    }

    @Test
    void badConfigsNameTheField() throws Exception {
        assertThatThrownBy(() -> WorkerFileConfig.load(yaml("worker: { batchSze: 5 }\ndatabase: { url: x }"), Map.of()))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("worker.batchSze"));
        assertThatThrownBy(() -> WorkerFileConfig.load(yaml("cluster: a"), Map.of()))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("database.url"));
        assertThatThrownBy(
                        () -> WorkerFileConfig.load(yaml("database: { url: x }\nworker: { leaseMs: 1000 }"), Map.of())
                                .workerConfig())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("handlerTimeout"));
    }

    @Test
    void theMainSaysWhatIsWrongAndExitsWithTwo() throws Exception {
        StringWriter err = new StringWriter();
        int rc = WorkerMain.run(
                new String[] {
                    "--config", yaml("instances: 0\ndatabase: { url: x }").toString()
                },
                new PrintWriter(new StringWriter()),
                new PrintWriter(err, true));
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString()).contains("instances must be in 1..64, was 0").contains("[instances]");
        assertThat(WorkerMain.run(
                        new String[] {}, new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter())))
                .isEqualTo(2);
    }

    @Test
    void zookeeperAuthFromTheFileAndTheEnvironmentOverIt() throws Exception {
        Path f = yaml("zookeeper: { auth: \"pidpool:file-secret\" }\ndatabase: { url: x }");
        assertThat(WorkerFileConfig.load(f, Map.of()).zooKeeperAuth().user()).isEqualTo("pidpool");
        WorkerFileConfig fromEnv = WorkerFileConfig.load(f, Map.of("PIDPOOL_ZOOKEEPER_AUTH", "ops:env-secret"));
        assertThat(fromEnv.zookeeper.auth).isEqualTo("ops:env-secret");
        assertThat(fromEnv.zooKeeperAuth().user()).isEqualTo("ops");
        assertThat(fromEnv.zooKeeperAuth().acl())
                .isEqualTo(ZkAuth.of("ops:env-secret").acl());
        // unset: none; an empty variable turns it off
        assertThat(WorkerFileConfig.load(yaml("database: { url: x }"), Map.of())
                        .zooKeeperAuth()
                        .enabled())
                .isFalse();
        assertThat(WorkerFileConfig.load(f, Map.of("PIDPOOL_ZOOKEEPER_AUTH", ""))
                        .zooKeeperAuth()
                        .enabled())
                .isFalse();
    }

    @Test
    void aMalformedZookeeperAuthIsRejectedWithoutEchoAndBeforeAnythingIsTouched() throws Exception {
        assertThatThrownBy(() -> WorkerFileConfig.load(
                        yaml("zookeeper: { auth: \"no-colon-secretvalue\" }\ndatabase: { url: x }"), Map.of()))
                .isInstanceOfSatisfying(PidPoolException.class, e -> {
                    assertThat(e.field()).isEqualTo("zookeeper.auth");
                    assertThat(e.getMessage()).contains("user:password").doesNotContain("secretvalue");
                });
        assertThatThrownBy(() ->
                        WorkerFileConfig.load(yaml("database: { url: x }"), Map.of("PIDPOOL_ZOOKEEPER_AUTH", "user:")))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("zookeeper.auth"));

        // the whole main: exit 2 at once, no ZooKeeper contacted (nothing listens on port 1; a
        // connection attempt would end in UNAVAILABLE, exit 1), the task table not created
        String db = "jdbc:h2:mem:authcfg" + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
        try (java.sql.Connection keepAlive = java.sql.DriverManager.getConnection(db)) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int rc = WorkerMain.run(
                    new String[] {
                        "--config",
                        yaml("""
                                zookeeper: { connect: "127.0.0.1:1", auth: "us er:secretvalue" }
                                database: { url: "%s", migrate: true }
                                """
                                        .formatted(db))
                                .toString()
                    },
                    new PrintWriter(out, true),
                    new PrintWriter(err, true));
            assertThat(rc).isEqualTo(2);
            assertThat(err.toString())
                    .contains("zookeeper.auth (or PIDPOOL_ZOOKEEPER_AUTH) must be user:password")
                    .contains("[zookeeper.auth]")
                    .doesNotContain("secretvalue");
            assertThat(out.toString()).doesNotContain("secretvalue");
            assertThat(publicTables(keepAlive)).as("no table created").isEmpty();
            // the check sees the task table once it is there
            org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
            ds.setURL(db);
            io.pidpool.worker.task.TaskSchema.migrate(ds);
            assertThat(publicTables(keepAlive)).isNotEmpty();
        }
    }

    /** The tables of the PUBLIC schema (where Flyway would create the task table and its history). */
    static java.util.List<String> publicTables(java.sql.Connection c) throws java.sql.SQLException {
        java.util.List<String> names = new java.util.ArrayList<>();
        try (var rs = c.getMetaData().getTables(null, "PUBLIC", "%", null)) {
            while (rs.next()) {
                names.add(rs.getString("TABLE_NAME"));
            }
        }
        return names;
    }

    @Test
    void aMisspelledVariableIsReportedWithTheClosestOne() {
        assertThat(WorkerFileConfig.unknownVariableWarnings(Map.of(
                        "PIDPOOL_DATABSE_URL", "jdbc:h2:mem:x",
                        "PIDPOOL_DATABASE_URL", "jdbc:h2:mem:y",
                        "PIDPOOL_TEST_MARIADB_URL", "jdbc:mariadb://x")))
                .containsExactly("environment variable PIDPOOL_DATABSE_URL names no configuration key and is ignored;"
                        + " did you mean PIDPOOL_DATABASE_URL (database.url)?");
    }
}
