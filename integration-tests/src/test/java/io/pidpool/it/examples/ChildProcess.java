package io.pidpool.it.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A child process whose standard output and error go to files (so it never blocks on a full pipe),
 * killed by {@link #close()} and by a shutdown hook if the test JVM ends first.
 */
final class ChildProcess implements AutoCloseable {
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly), "example-process-reaper"));
    }

    private final String name;
    private final Process process;
    private final Path out;
    private final Path err;

    private ChildProcess(String name, Process process, Path out, Path err) {
        this.name = name;
        this.process = process;
        this.out = out;
        this.err = err;
    }

    static ChildProcess start(String name, List<String> command, Map<String, String> env, Path workDir) {
        try {
            Files.createDirectories(workDir);
            Path out = workDir.resolve(name + ".out");
            Path err = workDir.resolve(name + ".err");
            ProcessBuilder builder =
                    new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
            builder.environment().keySet().removeIf(k -> k.startsWith("PIDPOOL_"));
            builder.environment().putAll(env);
            Process process = builder.start();
            LIVE.add(process);
            return new ChildProcess(name, process, out, err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Waits for the exit; returns the exit code, or fails (and kills it) after {@code atMost}. */
    int awaitExit(Duration atMost) throws InterruptedException {
        if (!process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS)) {
            close();
            throw new AssertionError(name + " did not exit within " + atMost + "\n" + describe());
        }
        LIVE.remove(process);
        return process.exitValue();
    }

    String stdout() {
        return read(out);
    }

    String stderr() {
        return read(err);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Both outputs, for assertion messages. */
    String describe() {
        return "--- " + name + " stdout (" + out + ")\n" + stdout() + "--- " + name + " stderr (" + err + ")\n"
                + tail(stderr(), 60);
    }

    private static String tail(String text, int lines) {
        List<String> all = text.lines().toList();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size())) + "\n";
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(15, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        LIVE.remove(process);
    }
}
