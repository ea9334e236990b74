package io.pidpool.server.embedded;

import io.pidpool.core.error.PidPoolException;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.embedded.core.ExecutableProvider;

/**
 * A {@code redis-server} child process on 127.0.0.1 with its data (append-only file) under one
 * directory.
 *
 * <p>The binary comes from the {@code com.github.codemonstur:embedded-redis} artifact (Redis 6.2
 * for Linux x86-64/arm64 and macOS), extracted into a temporary directory that {@link #close()}
 * removes. If that binary is missing for this platform or does not start, a {@code redis-server}
 * found on {@code PATH} is used instead, and the log says so. Only the binary is taken from that
 * library: this class runs the process itself so that start-up has a deadline, the output is
 * drained for the process's whole life (a full pipe would stall Redis), and stopping happens in
 * the caller's order rather than in a shutdown hook of its own.
 *
 * <p>If this JVM is killed with SIGKILL the child keeps running; its pid is in {@code
 * <dir>/redis.pid}.
 */
public final class EmbeddedRedis implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedRedis.class);
    private static final String READY = "Ready to accept connections";
    private static final long START_TIMEOUT_MS = 20_000;
    private static final long STOP_TIMEOUT_MS = 10_000;

    private final Process process;
    private final int port;
    private final Path binaryDir;
    private final String binary;

    private EmbeddedRedis(Process process, int port, Path binaryDir, String binary) {
        this.process = process;
        this.port = port;
        this.binaryDir = binaryDir;
        this.binary = binary;
    }

    /** Starts {@code redis-server} on 127.0.0.1:{@code port} with its data in {@code dir}. */
    public static EmbeddedRedis start(Path dir, int port) {
        LoopbackPorts.requireFree(port, "--redis-port");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw PidPoolException.unavailable("cannot create the Redis data directory " + dir, e);
        }
        List<String> failures = new ArrayList<>();
        Path extracted = null;
        try {
            extracted = Files.createTempDirectory("pidpool-redis-");
            File packaged = ExecutableProvider.newJarResourceProvider(extracted.toFile())
                    .get();
            return launch(packaged.getAbsolutePath(), dir, port, extracted);
        } catch (IOException | RuntimeException e) {
            failures.add("packaged redis-server: " + e.getMessage());
            deleteTree(extracted);
        }
        try {
            String onPath =
                    ExecutableProvider.newExecutableInPath("redis-server").get().getAbsolutePath();
            log.warn(
                    "the redis-server packaged for this platform did not start ({}); using {} from PATH",
                    failures,
                    onPath);
            return launch(onPath, dir, port, null);
        } catch (IOException | RuntimeException e) {
            failures.add("redis-server on PATH: " + e.getMessage());
        }
        throw PidPoolException.unavailable("cannot start an embedded Redis: " + String.join("; ", failures), null);
    }

    private static EmbeddedRedis launch(String binary, Path dir, int port, Path binaryDir) throws IOException {
        Path data = dir.toAbsolutePath();
        List<String> command = List.of(
                binary,
                "--port",
                Integer.toString(port),
                "--bind",
                LoopbackPorts.LOOPBACK,
                "--protected-mode",
                "yes",
                "--dir",
                data.toString(),
                "--pidfile",
                data.resolve("redis.pid").toString(),
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--daemonize",
                "no");
        Process process = new ProcessBuilder(command)
                .directory(data.toFile())
                .redirectErrorStream(true)
                .start();
        CompletableFuture<Void> ready = new CompletableFuture<>();
        Deque<String> lastLines = new ArrayDeque<>();
        Thread drain = new Thread(() -> drain(process, port, ready, lastLines), "redis-" + port + "-output");
        drain.setDaemon(true);
        drain.start();
        try {
            ready.get(START_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            process.destroyForcibly();
            String output;
            synchronized (lastLines) {
                output = String.join(" | ", lastLines);
            }
            throw new IOException(
                    (e instanceof TimeoutException ? "not ready within " + START_TIMEOUT_MS + " ms" : "exited")
                            + (output.isEmpty() ? "" : "; its output: " + output));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("interrupted while waiting for redis-server", e);
        }
        log.info("embedded Redis ({}) listening on {}:{} (data in {})", binary, LoopbackPorts.LOOPBACK, port, data);
        return new EmbeddedRedis(process, port, binaryDir, binary);
    }

    /** Reads the child's output for its whole life: readiness first, then to the debug log. */
    private static void drain(Process process, int port, CompletableFuture<Void> ready, Deque<String> lastLines) {
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (!ready.isDone()) {
                    synchronized (lastLines) {
                        lastLines.addLast(line);
                        if (lastLines.size() > 5) {
                            lastLines.removeFirst();
                        }
                    }
                    if (line.contains(READY)) {
                        ready.complete(null);
                    }
                }
                log.debug("redis:{} {}", port, line);
            }
        } catch (IOException e) {
            log.debug("redis:{} output closed", port, e);
        } finally {
            ready.completeExceptionally(new IOException("redis-server exited"));
        }
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String address() {
        return "redis://" + LoopbackPorts.LOOPBACK + ":" + port;
    }

    public int port() {
        return port;
    }

    /** The path of the {@code redis-server} binary that runs. */
    public String binary() {
        return binary;
    }

    /** Asks Redis to shut down (SIGTERM: it writes its data and exits), then kills it if it lingers. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                log.warn("redis-server on port {} did not stop within {} ms; killing it", port, STOP_TIMEOUT_MS);
                process.destroyForcibly().waitFor(STOP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        deleteTree(binaryDir);
        log.info("embedded Redis on port {} stopped", port);
    }

    private static void deleteTree(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            log.debug("could not delete {}", root, e);
        }
    }
}
