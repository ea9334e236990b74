package io.pidpool.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded {@code pid-server.jar} as a separate process, the way the README runs it: reads the
 * ready line from its standard output, calls it, then sends SIGTERM and checks it shut down
 * cleanly with exit code 0 (every port released, so the child {@code redis-server} is gone too). A
 * second standalone on the same data directory refuses to start while the first runs.
 */
class StandaloneJarIT {
    /** Set by the failsafe configuration in pid-server/pom.xml; failsafe runs after package. */
    static final String JAR_PROPERTY = "pidpool.server.jar";

    @TempDir
    Path dataDir;

    Process process;

    @AfterEach
    void kill() throws InterruptedException {
        if (process != null && process.isAlive()) {
            // SIGTERM first: a SIGKILLed standalone leaves its redis-server child running
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void jarStartsStandalonePrintsTheReadyLineAndStopsOnSigterm() throws Exception {
        String jarPath = System.getProperty(JAR_PROPERTY);
        assertThat(jarPath).as("system property " + JAR_PROPERTY).isNotBlank();
        Path jar = Path.of(jarPath);
        assertThat(jar).as("the shaded jar (built by package)").isRegularFile();

        int[] ports = ItSupport.freePorts(3);
        Path tmp = Files.createDirectories(ItSupport.tmpdir().resolve("jar-it"));
        Path stderr = Files.createTempFile(tmp, "pid-server-", ".stderr.log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        process = new ProcessBuilder(
                        java,
                        "-Xmx256m",
                        "-Djava.io.tmpdir=" + tmp,
                        "-jar",
                        jar.toString(),
                        "standalone",
                        "--http-port",
                        Integer.toString(ports[0]),
                        "--zk-port",
                        Integer.toString(ports[1]),
                        "--redis-port",
                        Integer.toString(ports[2]),
                        "--data-dir",
                        dataDir.toString())
                .redirectError(stderr.toFile())
                .start();
        ItSupport.Lines out = new ItSupport.Lines();
        Thread reader = new Thread(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    out.add(line);
                }
            } catch (IOException e) {
                // the process went away
            }
        });
        reader.setDaemon(true);
        reader.start();

        await().atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(200))
                .failFast("pid-server exited; stderr: " + stderr, () -> !process.isAlive())
                .until(() -> out.find("PidPool ready:").isPresent());
        assertThat(out.find("PidPool ready:"))
                .hasValue("PidPool ready: http=http://127.0.0.1:" + ports[0] + " zookeeper=127.0.0.1:" + ports[1]
                        + " redis=redis://127.0.0.1:" + ports[2] + " cluster=default");
        List<String> lines = out.lines();
        assertThat(lines.get(0)).startsWith("PidPool admin token: ");
        String token = lines.get(0).split("\\s+")[3];

        HttpResponse<String> health = ItSupport.get("http://127.0.0.1:" + ports[0] + "/health", null);
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        assertThat(ItSupport.get("http://127.0.0.1:" + ports[0] + "/api/v1/cluster", token)
                        .statusCode())
                .isEqualTo(200);

        // a second standalone on the same data directory refuses before touching its files
        String secretKeyBefore = Files.readString(dataDir.resolve("secret.key"));
        int[] others = ItSupport.freePorts(3);
        Process second = new ProcessBuilder(
                        java,
                        "-Xmx128m",
                        "-Djava.io.tmpdir=" + tmp,
                        "-jar",
                        jar.toString(),
                        "standalone",
                        "--http-port",
                        Integer.toString(others[0]),
                        "--zk-port",
                        Integer.toString(others[1]),
                        "--redis-port",
                        Integer.toString(others[2]),
                        "--data-dir",
                        dataDir.toString())
                .redirectErrorStream(true)
                .start();
        String secondOutput = new String(second.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(second.exitValue()).as(secondOutput).isEqualTo(1);
        assertThat(secondOutput)
                .contains("pid-server: cannot start: data directory "
                        + dataDir.toAbsolutePath().normalize() + " is in use by another standalone (pid "
                        + process.pid() + ")")
                .doesNotContain("embedded ZooKeeper")
                .doesNotContain("embedded Redis");
        for (int port : others) {
            assertThat(ItSupport.isFree(port))
                    .as("the second never listened on %d", port)
                    .isTrue();
        }
        assertThat(Files.readString(dataDir.resolve("secret.key"))).isEqualTo(secretKeyBefore);
        assertThat(ItSupport.get("http://127.0.0.1:" + ports[0] + "/health", null)
                        .statusCode())
                .as("the first still runs")
                .isEqualTo(200);

        process.destroy(); // SIGTERM: the shutdown hook stops HTTP, clients, Redis, ZooKeeper
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("exits after SIGTERM")
                .isTrue();
        assertThat(process.exitValue())
                .as("exit code after SIGTERM (docs/runtime.md)")
                .isZero();
        for (int port : ports) {
            assertThat(ItSupport.isFree(port)).as("port %d released", port).isTrue();
        }
        String log = Files.readString(stderr);
        assertThat(log).contains("embedded Redis on port " + ports[2] + " stopped");
        assertThat(log).contains("embedded ZooKeeper on port " + ports[1] + " stopped");
        assertThat(log).doesNotContain(token);
    }
}
