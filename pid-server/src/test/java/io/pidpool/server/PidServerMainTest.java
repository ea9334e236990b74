package io.pidpool.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line up to the point where something would start (no network). */
class PidServerMainTest {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();
    final List<String> hooks = new ArrayList<>();

    int run(Map<String, String> env, String... args) {
        return PidServerMain.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                env,
                (name, action) -> hooks.add(name));
    }

    String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void noCommandPrintsUsage() {
        assertThat(run(Map.of())).isEqualTo(2);
        assertThat(out()).contains("standalone").contains("server");
    }

    @Test
    void helpAndVersion() {
        assertThat(run(Map.of(), "--help")).isZero();
        assertThat(run(Map.of(), "standalone", "--help")).isZero();
        assertThat(out())
                .contains("--http-port")
                .contains("--zk-port")
                .contains("--redis-port")
                .contains("--data-dir")
                .contains("--admin-token")
                .contains("8080")
                .contains("2181")
                .contains("6380");
        assertThat(run(Map.of(), "server", "--help")).isZero();
        assertThat(out()).contains("--config").contains("PIDPOOL_ZOOKEEPER_CONNECT");
        assertThat(run(Map.of(), "--version")).isZero();
        String expected = System.getProperty("pidpool.expected.version");
        assertThat(expected).as("set by surefire from ${project.version}").isNotBlank();
        assertThat(out()).contains("PidPool " + expected + System.lineSeparator());
    }

    @Test
    void usageErrorsExitWith2() {
        assertThat(run(Map.of(), "server")).isEqualTo(2);
        assertThat(err()).contains("--config");
        assertThat(run(Map.of(), "standalone", "--http-port", "eighty")).isEqualTo(2);
        assertThat(run(Map.of(), "nonsense")).isEqualTo(2);
        assertThat(hooks).isEmpty();
    }

    @Test
    void missingOrInvalidConfigExitsWith1NamingTheProblem(@TempDir Path dir) throws Exception {
        assertThat(run(Map.of(), "server", "--config", dir.resolve("nope.yml").toString()))
                .isEqualTo(1);
        assertThat(err()).contains("nope.yml").contains("does not exist");

        Path file = Files.writeString(dir.resolve("server.yml"), "http: {port: 70000}\n");
        assertThat(run(Map.of("PIDPOOL_DATABASE_URL", "postgres://x"), "server", "--config", file.toString()))
                .isEqualTo(1);
        assertThat(err())
                .contains("http.port")
                .contains("zookeeper.connect")
                .contains("database.url")
                .contains("PIDPOOL_DATABASE_URL")
                .contains("security.secretKey");
        assertThat(hooks).isEmpty();
        assertThat(out()).doesNotContain("PidPool ready");
    }

    @Test
    void badStandaloneOptionsExitWith1(@TempDir Path dir) {
        assertThat(run(Map.of(), "standalone", "--http-port", "70000", "--data-dir", dir.toString()))
                .isEqualTo(1);
        assertThat(err()).contains("--http-port");
        assertThat(run(Map.of(), "standalone", "--admin-token", "short", "--data-dir", dir.toString()))
                .isEqualTo(1);
        assertThat(err()).contains("--admin-token");
        assertThat(out()).doesNotContain("PidPool ready");
    }

    @Test
    void aMisspelledVariableIsReportedNamingTheClosestKey(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("server.yml"), "http: {port: 8080}\n");
        Map<String, String> env = Map.of(
                "PIDPOOL_ZOOKEPER_CONNECT", "zk1:2181", // one letter missing
                "PIDPOOL_HTTP_PROT", "9090", // two letters swapped
                "PIDPOOL_TEST_POSTGRES_URL", "jdbc:postgresql://x/y", // the tests' own: not reported
                "PIDPOOL_LOG_FORMAT", "text", // read by logback.xml: not reported
                "PIDPOOL_DATABASE_URL", "jdbc:h2:mem:x");
        assertThat(run(env, "server", "--config", file.toString())).isEqualTo(1);
        assertThat(err())
                .contains("pid-server: warning: environment variable PIDPOOL_ZOOKEPER_CONNECT names no"
                        + " configuration key and is ignored; did you mean PIDPOOL_ZOOKEEPER_CONNECT"
                        + " (zookeeper.connect)?")
                .contains("PIDPOOL_HTTP_PROT names no configuration key and is ignored; did you mean"
                        + " PIDPOOL_HTTP_PORT (http.port)?")
                .doesNotContain("PIDPOOL_TEST_POSTGRES_URL")
                .doesNotContain("PIDPOOL_LOG_FORMAT")
                .doesNotContain("PIDPOOL_DATABASE_URL names");
        // and the key the typo meant is still missing, which the validation says
        assertThat(err()).contains("zookeeper.connect");
    }

    @Test
    void anUnknownLogFormatIsAUsageError() {
        assertThat(run(Map.of("PIDPOOL_LOG_FORMAT", "xml"), "--version")).isEqualTo(2);
        assertThat(err())
                .contains("PIDPOOL_LOG_FORMAT")
                .contains("text or json")
                .contains("'xml'");
        assertThat(PidServerMain.logFormat(Map.of())).isEqualTo("text");
    }
}
