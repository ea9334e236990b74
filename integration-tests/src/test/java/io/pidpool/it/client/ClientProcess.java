package io.pidpool.it.client;

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
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link ClientMain} running in its own JVM (same classpath as the test), observed through its
 * stdout lines and controlled through signals and stdin.
 *
 * <p>Faults: {@link #kill()} is SIGKILL, {@link #stop()} / {@link #cont()} are SIGSTOP / SIGCONT
 * ({@code kill -STOP <pid>}), {@link #closeGracefully} asks the client to {@code close()}. Every
 * process is destroyed by {@link #close()} and, should a test not get there, by a JVM shutdown hook;
 * a client whose stdin closes (the test JVM died) exits on its own.
 *
 * <p>Times are {@code System.nanoTime()} of the test JVM at the moment a line was read, so they
 * compare with {@code PlatformServer} timestamps (a line is read a little after the fact it reports).
 *
 * <p>Thread-safe: one reader thread per process appends to concurrent collections; the rest is
 * called by the test thread.
 */
public final class ClientProcess implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClientProcess.class);
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            for (Process p : LIVE) {
                                p.destroyForcibly();
                            }
                        },
                        "client-process-reaper"));
    }

    /** What the client reported about its registration. */
    public record Registered(
            String instanceId, long sessionId, Duration sessionTimeout, String pidsPath, long atNanos) {
        public boolean handshakeDone() {
            return !pidsPath.equals("-");
        }
    }

    /** One line the client printed, with the time the test read it. */
    public record Line(String kind, String argument, long atNanos) {}

    /**
     * How to start a client.
     *
     * @param name the client's name on the platform and in logs (also the instance-id prefix)
     * @param secretKey base64 AES key to open PID passwords with, or {@code null} for the SDK's
     *     {@code TestSecrets} (what the fake leader seals with)
     */
    public record Spec(
            String name,
            String connectString,
            String cluster,
            String module,
            Duration sessionTimeout,
            String platformAddress,
            Path logDirectory,
            String secretKey) {}

    private final Spec spec;
    private final Process process;
    private final OutputStream stdin;
    private final List<Line> lines = new CopyOnWriteArrayList<>();
    private final Path logFile;
    private volatile Set<String> held = Set.of();
    private volatile Registered registered;
    private volatile String state = "";
    private volatile boolean frozen;

    private ClientProcess(Spec spec, Process process, Path logFile) {
        this.spec = spec;
        this.process = process;
        this.stdin = process.getOutputStream();
        this.logFile = logFile;
        Thread reader = new Thread(this::readLines, "client-" + spec.name() + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts the JVM; returns at once (see {@link #awaitStarted}). */
    public static ClientProcess start(Spec spec) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx128m");
        command.add("-Xss512k");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.add("-Xshare:auto");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ClientMain.class.getName());
        command.add("name=" + spec.name());
        command.add("connect=" + spec.connectString());
        command.add("cluster=" + spec.cluster());
        command.add("module=" + spec.module());
        command.add("sessionTimeoutMs=" + spec.sessionTimeout().toMillis());
        command.add("prefix=" + spec.name());
        command.add("platform=" + spec.platformAddress());
        if (spec.secretKey() != null) {
            command.add("secretKey=" + spec.secretKey());
        }
        try {
            Files.createDirectories(spec.logDirectory());
            Path logFile = spec.logDirectory().resolve(spec.name() + ".log");
            Process process = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .start();
            LIVE.add(process);
            log.info("client {}: started JVM pid {} (stderr: {})", spec.name(), process.pid(), logFile);
            return new ClientProcess(spec, process, logFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String name() {
        return spec.name();
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

    /** Waits until {@code PidClient.start()} returned in the client. */
    public ClientProcess awaitStarted(Duration atMost) {
        await("client " + name() + " started")
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    failIfDead();
                    return has("STARTED");
                });
        return this;
    }

    /** The latest registration the client reported. */
    public Optional<Registered> registration() {
        return Optional.ofNullable(registered);
    }

    /** Waits until the client reports a registration matching {@code condition}; returns it. */
    public Registered awaitRegistration(Predicate<Registered> condition, Duration atMost) {
        await("client " + name() + " registration")
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    failIfDead();
                    Registered r = registered;
                    return r != null && condition.test(r);
                });
        return registered;
    }

    /** Waits until the leader answered the current registration (PIDs can arrive). */
    public Registered awaitHandshake(Duration atMost) {
        return awaitRegistration(Registered::handshakeDone, atMost);
    }

    /** What {@code heldPids()} returned last (as of the last line read; stale while frozen). */
    public Set<String> held() {
        return held;
    }

    public String state() {
        return state;
    }

    /** Waits until {@code heldPids()} equals {@code pids}. */
    public void awaitHeld(Set<String> pids, Duration atMost) {
        await("client " + name() + " holds " + pids)
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    failIfDead();
                    return held.equals(pids);
                });
    }

    /** Every line read so far. */
    public List<Line> lines() {
        return List.copyOf(lines);
    }

    /** Lines of one kind ({@code ASSIGNED}, {@code REVOKED}, ...) about {@code argument} (null: any). */
    public List<Line> lines(String kind, String argument) {
        return lines.stream()
                .filter(l -> l.kind().equals(kind)
                        && (argument == null || l.argument().equals(argument)))
                .toList();
    }

    /** SIGKILL; waits until the process is gone. Returns the time the signal was sent. */
    public long kill() {
        long at = System.nanoTime();
        process.destroyForcibly();
        waitForExit(Duration.ofSeconds(10));
        log.info("client {}: killed (SIGKILL)", name());
        return at;
    }

    /** SIGSTOP: the JVM stops at once, every thread, without noticing. Returns the time it was sent. */
    public long stop() {
        long at = System.nanoTime();
        signal("STOP");
        frozen = true;
        log.info("client {}: frozen (SIGSTOP)", name());
        return at;
    }

    /** SIGCONT. Returns the time it was sent. */
    public long cont() {
        long at = System.nanoTime();
        signal("CONT");
        frozen = false;
        log.info("client {}: thawed (SIGCONT)", name());
        return at;
    }

    /** Asks the client to {@code close()} (revoke all, answer DELETED, leave) and waits for it to exit. */
    public void closeGracefully(Duration atMost) {
        try {
            stdin.write("close\n".getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("client " + name() + " cannot be told to close", e);
        }
        if (!waitForExit(atMost)) {
            throw new AssertionError("client " + name() + " did not exit within " + atMost + " after close");
        }
    }

    /** Destroys the process (SIGKILL, also when frozen) if it still runs. Idempotent. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            waitForExit(Duration.ofSeconds(10));
        }
        LIVE.remove(process);
    }

    private boolean waitForExit(Duration atMost) {
        try {
            boolean exited = process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS);
            if (exited) {
                LIVE.remove(process);
            }
            return exited;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private boolean has(String kind) {
        return lines.stream().anyMatch(l -> l.kind().equals(kind));
    }

    private void failIfDead() {
        if (!process.isAlive() && !frozen) {
            throw new AssertionError("client " + name() + " exited with " + process.exitValue() + "; see " + logFile
                    + "; last lines: " + tail());
        }
        lines.stream().filter(l -> l.kind().equals("FAILED")).findFirst().ifPresent(l -> {
            throw new AssertionError("client " + name() + " failed: " + l.argument() + "; see " + logFile);
        });
    }

    private List<Line> tail() {
        List<Line> all = lines();
        return all.subList(Math.max(0, all.size() - 10), all.size());
    }

    private void readLines() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String raw;
            while ((raw = in.readLine()) != null) {
                long now = System.nanoTime();
                if (!raw.startsWith("@@ ")) {
                    continue;
                }
                String body = raw.substring(3);
                int space = body.indexOf(' ');
                String kind = space < 0 ? body : body.substring(0, space);
                String argument = space < 0 ? "" : body.substring(space + 1);
                lines.add(new Line(kind, argument, now));
                switch (kind) {
                    case "HELD" -> held = argument.equals("-") ? Set.of() : Set.copyOf(List.of(argument.split(",")));
                    case "STATE" -> state = argument;
                    case "REGISTERED" -> {
                        String[] w = argument.split(" ");
                        registered = new Registered(
                                w[0],
                                Long.parseUnsignedLong(w[1], 16),
                                Duration.ofMillis(Long.parseLong(w[2])),
                                w[3],
                                now);
                    }
                    default -> {
                        // kept in lines
                    }
                }
                log.info("client {}: {}", name(), body);
            }
        } catch (IOException e) {
            // process gone
        }
    }

    /** The held set as a sorted string, for messages. */
    public String describeHeld() {
        return new TreeSet<>(held).toString();
    }
}
