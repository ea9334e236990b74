package io.pidpool.it.singleflight;

import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A {@link SingleFlightMain} in its own JVM (same class path), observed through its {@code @@} lines
 * and killed with SIGKILL. Thread-safe: one reader thread appends lines; the rest is the caller's.
 */
public final class FlightProcess implements AutoCloseable {
    private final Process process;
    private final OutputStream stdin;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final String name;

    private FlightProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        this.stdin = process.getOutputStream();
        Thread reader = new Thread(this::read, "flight-" + name + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts the JVM with {@code args} ({@code key=value}); stderr goes to {@code <tmpdir>/<name>.log}. */
    public static FlightProcess start(String name, List<String> args) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-cp",
                System.getProperty("java.class.path"),
                SingleFlightMain.class.getName()));
        command.addAll(args);
        try {
            Path dir = Path.of(System.getProperty("java.io.tmpdir"));
            Files.createDirectories(dir);
            Process p = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.appendTo(
                            dir.resolve(name + ".log").toFile()))
                    .start();
            return new FlightProcess(name, p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every {@code @@} line so far, without the marker. */
    public List<String> lines() {
        return List.copyOf(lines);
    }

    /** Waits for a line starting with {@code prefix}; returns it. */
    public String awaitLine(String prefix, Duration atMost) {
        await(name + " prints " + prefix)
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new AssertionError(name + " exited with " + process.exitValue());
                    }
                    return lines.stream().anyMatch(l -> l.startsWith(prefix));
                });
        return lines.stream().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow();
    }

    public void send(String line) {
        try {
            stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** SIGKILL; returns once the process is gone. */
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }

    private void read() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String raw;
            while ((raw = in.readLine()) != null) {
                if (raw.startsWith("@@ ")) {
                    lines.add(raw.substring(3));
                }
            }
        } catch (IOException e) {
            // process gone
        }
    }
}
