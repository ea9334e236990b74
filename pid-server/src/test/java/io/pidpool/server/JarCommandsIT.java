package io.pidpool.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Short-lived commands of the shaded {@code pid-server.jar} in a JVM of their own, where the real
 * logging configuration, manifest and exit path apply: what an operator sees on the terminal.
 */
class JarCommandsIT {
    @TempDir
    Path dir;

    record Result(int exit, String out, String err) {}

    Result run(String... args) throws Exception {
        String jar = System.getProperty(StandaloneJarIT.JAR_PROPERTY);
        assertThat(jar).as("system property " + StandaloneJarIT.JAR_PROPERTY).isNotBlank();
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-Djava.io.tmpdir=" + ItSupport.tmpdir(),
                "-jar",
                jar));
        command.addAll(Arrays.asList(args));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().keySet().removeIf(k -> k.startsWith("PIDPOOL_"));
        Process process = builder.start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("pid-server " + String.join(" ", args) + " did not exit");
        }
        return new Result(
                process.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    @Test
    void versionIsTheBuildsVersion() throws Exception {
        String expected = System.getProperty("pidpool.expected.version");
        assertThat(expected).as("set by failsafe from ${project.version}").isNotBlank();
        Result r = run("--version");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEqualTo("PidPool " + expected + System.lineSeparator());
    }

    @Test
    void anUnreachableZooKeeperIsOneClearLineNotStackTraces() throws Exception {
        int nothing = ItSupport.freePorts(1)[0]; // nothing listens here
        Path config = Files.writeString(
                dir.resolve("server.yml"),
                """
                http: { host: 127.0.0.1, port: 0 }
                zookeeper: { connect: "127.0.0.1:%d", connectionTimeoutMs: 3000 }
                redis: { address: "redis://127.0.0.1:1" }
                database: { url: "jdbc:h2:mem:unreachable" }
                security:
                  secretKey: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
                  tokens: [ { token: "jar-it-admin-0123456789", role: admin } ]
                """
                        .formatted(nothing));
        Result r = run("server", "--config", config.toString());
        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().lines().toList())
                .as("standard error")
                .containsExactly("pid-server: cannot start: ZooKeeper at 127.0.0.1:" + nothing
                        + " is not reachable within 3000 ms (zookeeper.connect)");
    }
}
