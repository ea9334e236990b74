package io.pidpool.server;

import io.pidpool.server.embedded.LoopbackPorts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
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
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Helpers shared by the pid-server integration tests. */
public final class ItSupport {
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    private ItSupport() {}

    /** {@code n} distinct ports that were free on 127.0.0.1 a moment ago. */
    public static int[] freePorts(int n) {
        Set<Integer> ports = new HashSet<>();
        while (ports.size() < n) {
            ports.add(LoopbackPorts.pickFree());
        }
        return ports.stream().mapToInt(Integer::intValue).toArray();
    }

    public static boolean isFree(int port) {
        try {
            LoopbackPorts.requireFree(port, "port");
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The JVM's temp dir (failsafe points it into target/), created if missing. */
    public static Path tmpdir() {
        Path dir = Path.of(System.getProperty("java.io.tmpdir"));
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static HttpResponse<String> get(String url, String token) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b.GET().build());
    }

    public static HttpResponse<String> postJson(String url, String token, String json) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b.POST(HttpRequest.BodyPublishers.ofString(json)).build());
    }

    public static HttpResponse<String> putJson(String url, String token, String json) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b.PUT(HttpRequest.BodyPublishers.ofString(json)).build());
    }

    /** Waits until {@code /api/v1/cluster} names a leader; returns its id. */
    public static String awaitLeader(String base, String token) {
        java.util.concurrent.atomic.AtomicReference<String> leader =
                new java.util.concurrent.atomic.AtomicReference<>();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    HttpResponse<String> r = get(base + "/api/v1/cluster", token);
                    if (r.statusCode() != 200) {
                        return false;
                    }
                    var node = JSON.readTree(r.body()).path("leader");
                    leader.set(node.isNull() ? null : node.asText());
                    return leader.get() != null;
                });
        return leader.get();
    }

    public static final com.fasterxml.jackson.databind.ObjectMapper JSON =
            new com.fasterxml.jackson.databind.ObjectMapper();

    private static HttpResponse<String> send(HttpRequest request) {
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** An output stream that keeps complete lines, thread-safely, for tests that wait on output. */
    public static final class Lines extends OutputStream {
        private final ByteArrayOutputStream current = new ByteArrayOutputStream();
        private final List<String> lines = new ArrayList<>();

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                lines.add(current.toString(StandardCharsets.UTF_8));
                current.reset();
            } else {
                current.write(b);
            }
        }

        public synchronized List<String> lines() {
            return List.copyOf(lines);
        }

        public Optional<String> find(String prefix) {
            return lines().stream().filter(l -> l.startsWith(prefix)).findFirst();
        }

        public void add(String line) {
            synchronized (this) {
                lines.add(line);
            }
        }
    }
}
