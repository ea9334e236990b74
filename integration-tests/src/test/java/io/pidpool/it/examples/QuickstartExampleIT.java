package io.pidpool.it.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * docs/sdk-quickstart.md, step by step, as a user runs it: a {@code standalone} server in its own
 * JVM, {@code examples/operator.sh} (curl) creates the module and a PID, and the example business
 * server ({@code io.pidpool.examples.BusinessServer}) runs with {@code examples/run.sh} in a JVM
 * of its own on the example project's runtime class path (its jar's manifest: the SDK with its
 * exclusions, the BOM's versions, logback) with the key from {@code <data-dir>/secret.key}. It must log in with the PID,
 * get a permit, refund a command, log out and exit 0.
 */
class QuickstartExampleIT {
    private static final Pattern READY =
            Pattern.compile("(?m)^PidPool ready: http=(\\S+) zookeeper=(\\S+) redis=(\\S+) cluster=(\\S+)$");
    private static final ObjectMapper JSON = new ObjectMapper();

    private Path dir;
    private final List<ChildProcess> processes = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        dir = Path.of("target", "quickstart", "run-" + ProcessHandle.current().pid() + "-" + System.nanoTime())
                .toAbsolutePath();
        Files.createDirectories(dir);
    }

    @AfterEach
    void tearDown() {
        processes.forEach(ChildProcess::close);
    }

    @Test
    void theQuickStartGetsAPidAndAPermitFromAStandaloneServer() throws Exception {
        String token = "quickstart-" + UUID.randomUUID();
        ChildProcess server = start("standalone", standaloneCommand(dir.resolve("data"), token), Map.of());
        Matcher ready = awaitReady(server);
        String http = ready.group(1);

        // the operator's script, with curl
        ChildProcess operator = start(
                "operator",
                List.of("bash", ExampleProject.DIR.resolve("operator.sh").toString()),
                Map.of("PP", http, "ADMIN_TOKEN", token));
        assertThat(operator.awaitExit(Duration.ofSeconds(60)))
                .as("operator.sh\n%s", operator.describe())
                .isZero();
        assertThat(operator.stdout()).contains("\"status\":\"DEALED\"");

        // the business server, with the quick start's own script: on the example's runtime class path
        ChildProcess example = start(
                "business-server",
                List.of("bash", ExampleProject.DIR.resolve("run.sh").toString()),
                Map.of(
                        "JAVA_HOME",
                        System.getProperty("java.home"),
                        "JAVA_OPTS",
                        "-Xmx128m",
                        "MAVEN_REPO",
                        ExampleProject.localRepository(),
                        "PIDPOOL_ZOOKEEPER",
                        ready.group(2),
                        "PIDPOOL_REDIS",
                        ready.group(3),
                        "PIDPOOL_SECRET_KEY_FILE",
                        dir.resolve("data").resolve("secret.key").toString()));
        int exit = example.awaitExit(Duration.ofSeconds(120));
        String out = example.stdout();
        assertThat(exit).as("the example's exit code\n%s", example.describe()).isZero();
        assertThat(out)
                .as("the example's output\n%s", example.describe())
                .contains("login demo-1 at https://platform.example/eu")
                .contains("held [demo-1], session at https://platform.example/eu")
                .containsPattern("permit 3 commands of demo-1 \\(\\d{4}-\\d{2}\\), deduction \\S+")
                .containsPattern("refunded 1 of \\S+")
                .contains("logout demo-1")
                .endsWith("done\n");
        // logs reached the binding (the SDK logs through SLF4J only)
        assertThat(example.stderr()).contains("DefaultPidClient - Registered", "OutcomeQueue - Assigned 1 PID: demo-1");

        // close() left: the cluster sees no live instance of the module any more
        JsonNode module = get(http, token, "/api/v1/modules/demo%23orders%23sender");
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            JsonNode instances =
                    get(http, token, "/api/v1/modules/demo%23orders%23sender").path("instances");
            for (JsonNode i : instances) {
                if (i.path("live").asBoolean()) {
                    return false;
                }
            }
            return true;
        });
        assertThat(module.path("pids").asInt()).isEqualTo(1);
    }

    private ChildProcess start(String name, List<String> command, Map<String, String> env) {
        ChildProcess p = ChildProcess.start(name, command, env, dir);
        processes.add(p);
        return p;
    }

    /** The shaded jar when pid-server was packaged, else its main class on this test's class path. */
    private static List<String> standaloneCommand(Path dataDir, String token) {
        List<String> command = new ArrayList<>(
                List.of(ChildProcess.javaBinary(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        command.add("-Djava.io.tmpdir=" + dataDir.getParent());
        Path jar = ExampleProject.ROOT.resolve("pid-server/target/pid-server.jar");
        if (Files.isRegularFile(jar)) {
            command.addAll(List.of("-jar", jar.toString()));
        } else {
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.pidpool.server.PidServerMain"));
        }
        command.addAll(List.of(
                "standalone",
                "--http-port",
                "0",
                "--zk-port",
                "0",
                "--redis-port",
                "0",
                "--data-dir",
                dataDir.toString(),
                "--admin-token",
                token));
        return command;
    }

    private static Matcher awaitReady(ChildProcess server) {
        Matcher[] found = new Matcher[1];
        await("standalone ready")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    if (!server.isAlive()) {
                        throw new AssertionError("standalone exited before it was ready\n" + server.describe());
                    }
                    Matcher m = READY.matcher(server.stdout());
                    if (m.find()) {
                        found[0] = m;
                        return true;
                    }
                    return false;
                });
        return found[0];
    }

    private static JsonNode get(String http, String token, String path) throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(http + path))
                                .header("Authorization", "Bearer " + token)
                                .timeout(Duration.ofSeconds(10))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("%s: %s", path, response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }
}
