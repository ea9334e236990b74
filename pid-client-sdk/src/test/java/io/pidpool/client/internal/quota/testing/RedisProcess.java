package io.pidpool.client.internal.quota.testing;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import redis.embedded.core.ExecutableProvider;

/**
 * A redis-server process of a test's own, on a free loopback port: for tests that kill, restart or
 * flush Redis and so must not touch the shared server. The binary is {@code redis-server} from PATH
 * if there is one, else the one packaged in {@code com.github.codemonstur:embedded-redis} (Redis 6.2,
 * linux-x86_64 / macOS). A durable process writes an append-only file fsynced on every write
 * ({@code appendfsync always}), so a SIGKILL loses no acknowledged write and {@link #restart()} finds
 * them all.
 *
 * <p>Not thread-safe: one test thread controls it.
 */
public final class RedisProcess implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

    private final Path dir;
    private final boolean durable;
    private final int port;
    private final String binary;
    private final List<String> extraArgs;
    private Process process;

    private RedisProcess(Path dir, boolean durable, int port, String binary, List<String> extraArgs) {
        this.dir = dir;
        this.durable = durable;
        this.port = port;
        this.binary = binary;
        this.extraArgs = List.copyOf(extraArgs);
    }

    /** Starts a server in a fresh directory under {@code java.io.tmpdir}. */
    public static RedisProcess start(boolean durable) {
        return start(durable, binary());
    }

    /** Starts {@code binary} (a redis-server) in a fresh directory under {@code java.io.tmpdir}. */
    public static RedisProcess start(boolean durable, String binary) {
        return start(durable, binary, List.of());
    }

    /** Starts {@code binary} with additional server arguments (e.g. {@code --cluster-enabled yes}). */
    public static RedisProcess start(boolean durable, String binary, List<String> extraArgs) {
        try {
            Path base = Path.of(System.getProperty("java.io.tmpdir"));
            Files.createDirectories(base);
            Path dir = Files.createTempDirectory(base, "redis-");
            RedisProcess p = new RedisProcess(dir, durable, freePort(), binary, extraArgs);
            p.launch();
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** SIGKILL: no shutdown, no final save. Returns once the process is gone. */
    public void kill() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("redis-server on port " + port + " did not die");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        process = null;
    }

    /** Starts the server again on the same port and directory (after {@link #kill()}). */
    public void restart() {
        kill();
        launch();
    }

    public boolean alive() {
        return process != null && process.isAlive();
    }

    private void launch() {
        List<String> args = new ArrayList<>(List.of(
                binary,
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                dir.toString(),
                "--daemonize",
                "no",
                "--save",
                "",
                "--logfile",
                dir.resolve("redis.log").toString()));
        if (durable) {
            args.addAll(List.of("--appendonly", "yes", "--appendfsync", "always"));
        } else {
            args.addAll(List.of("--appendonly", "no"));
        }
        args.addAll(extraArgs);
        try {
            process = new ProcessBuilder(args)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("stdout.log").toFile())
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        await("redis-server on port " + port)
                .atMost(START_TIMEOUT)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException("redis-server exited: " + log());
                    }
                    return "+PONG".equals(command(port, "PING"));
                });
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("redis.log")) + Files.readString(dir.resolve("stdout.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() {
        kill();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            // best effort: it is under target/
        }
    }

    /** The redis-server packaged in embedded-redis for this OS and architecture. */
    public static String embeddedBinary() {
        try {
            return ExecutableProvider.newJarResourceProvider().get().getAbsolutePath();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded-redis has no redis-server for this platform", e);
        }
    }

    /** The redis-server binary: PATH first, else the one inside embedded-redis. */
    public static synchronized String binary() {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(File.pathSeparator)) {
                File f = new File(d, "redis-server");
                if (f.isFile() && f.canExecute()) {
                    return f.getAbsolutePath();
                }
            }
        }
        return embeddedBinary();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        }
    }

    /**
     * Sends one command over a fresh connection and returns the first reply line (or the bulk body),
     * or {@code null} when the server cannot be reached.
     */
    public static String command(int port, String... args) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            s.setSoTimeout(5000);
            StringBuilder req = new StringBuilder("*").append(args.length).append("\r\n");
            for (String a : args) {
                byte[] b = a.getBytes(StandardCharsets.UTF_8);
                req.append('$').append(b.length).append("\r\n").append(a).append("\r\n");
            }
            OutputStream out = s.getOutputStream();
            out.write(req.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            String first = readLine(in);
            if (first.startsWith("$")) {
                int len = Integer.parseInt(first.substring(1));
                if (len < 0) {
                    return null;
                }
                byte[] body = in.readNBytes(len + 2);
                return new String(body, 0, len, StandardCharsets.UTF_8);
            }
            return first;
        } catch (IOException e) {
            return null;
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\r') {
                in.read();
                break;
            }
            sb.append((char) c);
        }
        return sb.toString();
    }
}
