package io.pidpool.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tarball as an operator uses it: unpack, run {@code bin/pidpool-server standalone} with JSON
 * logs, wait for the ready line, check {@code /metrics} against the Grafana dashboard, apply one
 * batch and find its id in the JSON log's MDC, then SIGTERM and expect exit code 0.
 */
class DistributionIT {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String TOKEN = "dist-it-admin-token-0123456789";
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dir;

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
    void unpackedServerStartsServesTheDashboardsMetricsAndStopsWithExitCode0() throws Exception {
        Path home = unpack();
        for (String file : List.of(
                "bin/pidpool-server",
                "bin/pidpool-worker",
                "lib/pid-server.jar",
                "lib/pid-worker.jar",
                "config/server.yml",
                "config/worker.yml",
                "systemd/pidpool-server.service",
                "systemd/pidpool-worker.service",
                "grafana/pidpool.json",
                "README.md")) {
            assertThat(home.resolve(file)).as(file).isRegularFile();
        }
        assertThat(Files.getPosixFilePermissions(home.resolve("bin/pidpool-server")))
                .contains(PosixFilePermission.OWNER_EXECUTE);
        assertThat(Files.getPosixFilePermissions(home.resolve("bin/pidpool-worker")))
                .contains(PosixFilePermission.OWNER_EXECUTE);

        int[] ports = freePorts(3);
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        ProcessBuilder builder = new ProcessBuilder(
                        home.resolve("bin/pidpool-server").toString(),
                        "standalone",
                        "--http-port",
                        Integer.toString(ports[0]),
                        "--zk-port",
                        Integer.toString(ports[1]),
                        "--redis-port",
                        Integer.toString(ports[2]),
                        "--data-dir",
                        dir.resolve("data").toString(),
                        "--admin-token",
                        TOKEN)
                .redirectError(dir.resolve("stderr.log").toFile());
        builder.environment().keySet().removeIf(k -> k.startsWith("PIDPOOL_"));
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("JAVA_OPTS", "-Xmx256m -Djava.io.tmpdir=" + tmp);
        builder.environment().put("PIDPOOL_LOG_FORMAT", "json");
        process = builder.start();
        List<String> out = readLines(process);

        await().atMost(Duration.ofSeconds(120))
                .pollInterval(Duration.ofMillis(200))
                .failFast("pid-server exited; see " + dir.resolve("stderr.log"), () -> !process.isAlive())
                .until(() -> out.stream().anyMatch(l -> l.startsWith("PidPool ready:")));
        String base = "http://127.0.0.1:" + ports[0];

        // a batch, applied by this server (the leader): its id is in the MDC of the leader's log line
        HttpResponse<String> batch =
                send(HttpRequest.newBuilder(URI.create(base + "/api/v1/modules/fin%23risk%23scorer?wait=true"))
                        .header("Authorization", "Bearer " + TOKEN)
                        .header("Content-Type", "application/json")
                        .PUT(HttpRequest.BodyPublishers.ofString("{\"servers\":1,\"monthlyDemand\":100}"))
                        .build());
        assertThat(batch.statusCode()).as(batch.body()).isEqualTo(200);
        String batchId = JSON.readTree(batch.body()).get("id").asText();
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(jsonLog()).anySatisfy(event -> {
                    assertThat(event.path("mdc").path("batchId").asText()).isEqualTo(batchId);
                    assertThat(event.path("formattedMessage").asText()).startsWith("applied batch " + batchId);
                }));

        // every metric the dashboard queries is exported (after a few requests, so HTTP series exist)
        assertThat(get(base + "/health").statusCode()).isEqualTo(200);
        assertThat(get(base + "/metrics").statusCode()).isEqualTo(200);
        String metrics = get(base + "/metrics").body();
        Set<String> exported = new TreeSet<>();
        for (String line : metrics.lines().toList()) {
            if (!line.startsWith("#") && !line.isBlank()) {
                exported.add(line.split("[{ ]", 2)[0]);
            }
        }
        Set<String> queried = dashboardMetrics(Path.of(System.getProperty("pidpool.dashboard")));
        assertThat(queried).hasSizeGreaterThan(15);
        assertThat(exported).as("metrics on /metrics").containsAll(queried);

        process.destroy(); // SIGTERM
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("exits after SIGTERM")
                .isTrue();
        assertThat(process.exitValue()).as("exit code after SIGTERM").isZero();
        assertThat(jsonLog())
                .as("every line of standard error is a JSON log event")
                .isNotEmpty();
    }

    /**
     * The metric names in the dashboard's queries: each name written as a selector ({@code
     * name{...}}) in a panel's {@code expr}, and the metric of each {@code label_values(...)}
     * variable. Every expr must have at least one selector, so none escapes the check.
     */
    static Set<String> dashboardMetrics(Path dashboard) throws IOException {
        JsonNode root = JSON.readTree(dashboard.toFile());
        Set<String> names = new TreeSet<>();
        Pattern selector = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{");
        List<String> exprs = new ArrayList<>();
        root.findValues("expr").forEach(e -> exprs.add(e.asText()));
        assertThat(exprs).as("queries in " + dashboard).isNotEmpty();
        for (String expr : exprs) {
            Matcher m = selector.matcher(expr);
            boolean any = false;
            while (m.find()) {
                names.add(m.group(1));
                any = true;
            }
            assertThat(any).as("a metric selector name{...} in: " + expr).isTrue();
        }
        Pattern labelValues = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)");
        for (JsonNode variable : root.path("templating").path("list")) {
            Matcher m = labelValues.matcher(variable.path("definition").asText(""));
            if (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    List<JsonNode> jsonLog() throws IOException {
        List<JsonNode> events = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve("stderr.log"), StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                events.add(JSON.readTree(line)); // throws if a line is not JSON
            }
        }
        return events;
    }

    Path unpack() throws Exception {
        Path archive = Path.of(System.getProperty("pidpool.dist.archive"));
        assertThat(archive).as("the tarball (built by package)").isRegularFile();
        Path target = Files.createDirectories(dir.resolve("unpacked"));
        Process tar = new ProcessBuilder("tar", "-xzf", archive.toString(), "-C", target.toString())
                .inheritIO()
                .start();
        assertThat(tar.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(tar.exitValue()).isZero();
        return target.resolve(System.getProperty("pidpool.dist.base"));
    }

    static List<String> readLines(Process process) {
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process went away
            }
        });
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    static HttpResponse<String> get(String url) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + TOKEN)
                .GET()
                .build());
    }

    static HttpResponse<String> send(HttpRequest request) throws Exception {
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    static int[] freePorts(int n) throws IOException {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                sockets.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : sockets) {
                s.close();
            }
        }
    }
}
