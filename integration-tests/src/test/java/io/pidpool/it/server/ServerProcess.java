package io.pidpool.it.server;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pid-server process ({@code server --config <yml>}) in its own JVM: the shaded {@code
 * pid-server/target/pid-server.jar} when it was built (the {@code package} phase of pid-server), else
 * {@code PidServerMain} on the test's class path. Standard output is read for the {@code PidPool
 * ready:} line; standard error (the logs) goes to a file. {@link #kill()} is SIGKILL ({@code
 * destroyForcibly}); every JVM is destroyed by {@link #close()} and by a shutdown hook.
 *
 * <p>Thread-safe: one reader thread per process; the rest is called by the test thread.
 */
public final class ServerProcess implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ServerProcess.class);
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
    private static final Pattern READY = Pattern.compile("^PidPool ready: http=(\\S+) .*");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            for (Process p : LIVE) {
                                p.destroyForcibly();
                            }
                        },
                        "server-process-reaper"));
    }

    private final String name;
    private final Process process;
    private final String token;
    private final Path logFile;
    private volatile String baseUrl;

    private ServerProcess(String name, Process process, String token, Path logFile) {
        this.name = name;
        this.process = process;
        this.token = token;
        this.logFile = logFile;
        Thread reader = new Thread(this::readLines, "server-" + name + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code server --config <config>}; returns at once (see {@link #awaitReady}). */
    public static ServerProcess start(String name, Path config, String adminToken, Path logDirectory) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.add("-Djava.io.tmpdir=" + logDirectory.toAbsolutePath());
        Path jar = Path.of("..", "pid-server", "target", "pid-server.jar");
        if (Files.isRegularFile(jar)) {
            command.add("-jar");
            command.add(jar.toAbsolutePath().normalize().toString());
        } else {
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add("io.pidpool.server.PidServerMain");
        }
        command.add("server");
        command.add("--config");
        command.add(config.toAbsolutePath().toString());
        try {
            Files.createDirectories(logDirectory);
            Path logFile = logDirectory.resolve(name + ".log");
            ProcessBuilder builder =
                    new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
            // the tests' own variables must not leak into the server's configuration
            builder.environment().keySet().removeIf(k -> k.startsWith("PIDPOOL_"));
            Process process = builder.start();
            LIVE.add(process);
            log.info(
                    "server {}: started JVM pid {} ({}; stderr: {})",
                    name,
                    process.pid(),
                    Files.isRegularFile(jar) ? jar : "class path",
                    logFile);
            return new ServerProcess(name, process, adminToken, logFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void readLines() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                Matcher m = READY.matcher(line);
                if (m.matches()) {
                    baseUrl = m.group(1);
                }
                log.debug("server {}: {}", name, line);
            }
        } catch (IOException e) {
            // the process ended
        }
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public Path logFile() {
        return logFile;
    }

    /** Waits for the ready line (the HTTP API answers). */
    public ServerProcess awaitReady(Duration atMost) {
        await("server " + name + " ready")
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    if (!process.isAlive() && baseUrl == null) {
                        throw new IllegalStateException("server " + name + " exited with " + process.exitValue()
                                + " before it was ready; see " + logFile);
                    }
                    return baseUrl != null;
                });
        return this;
    }

    /** SIGKILL: no shutdown hook, no graceful leave; its sessions and connections just stop. */
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LIVE.remove(process);
    }

    /** {@code GET path} with the admin token; the JSON answer, or an exception for a non-2xx status. */
    public JsonNode get(String path) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET());
    }

    public JsonNode post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));
    }

    public JsonNode put(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(json)));
    }

    private JsonNode send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = HTTP.send(
                    request.header("Authorization", "Bearer " + token)
                            .timeout(Duration.ofSeconds(60))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() / 100 != 2) {
                throw new IllegalStateException("server " + name + ": " + response.uri() + " answered "
                        + response.statusCode() + " " + response.body());
            }
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@code http://host:port} of its HTTP API, once ready. */
    public String baseUrl() {
        return baseUrl;
    }

    /** The node id of this server as the cluster knows it ({@code /api/v1/cluster} {@code self}). */
    public String nodeId() {
        return get("/api/v1/cluster").path("self").asText();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        LIVE.remove(process);
    }

    @Override
    public String toString() {
        return name + "(pid " + process.pid() + ")";
    }
}
