package io.pidpool.it.singleflight;

import io.pidpool.client.SingleFlight;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

/**
 * One single-flight participant in its own JVM. Arguments {@code key=value}: {@code connect},
 * {@code sessionTimeoutMs} (1000), {@code mode}:
 *
 * <ul>
 *   <li>{@code hold}: submits {@code key} with a work that prints {@code @@ RUNNING} and never ends
 *       (to be killed);
 *   <li>{@code serve}: reads {@code go <key> <requests> <workMs>} lines from stdin and fires that many
 *       concurrent requests ({@link #fire}).
 * </ul>
 *
 * <p>Reports on stdout, one {@code @@ KIND ...} line each: {@code STARTED}, {@code RAN <key> <start
 * µs> <end µs>} (the work ran here; wall-clock microseconds), {@code ANSWERED <key> <µs> <ok|error>}
 * per request, {@code FIRED <key>} when all of a round's requests are answered. Exits when stdin
 * closes.
 */
public final class SingleFlightMain {
    private SingleFlightMain() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>(Map.of("sessionTimeoutMs", "1000", "mode", "serve"));
        for (String a : args) {
            String[] kv = a.split("=", 2);
            o.put(kv[0], kv[1]);
        }
        try (SingleFlight flights = SingleFlight.builder()
                .connectString(o.get("connect"))
                .sessionTimeout(Duration.ofMillis(Long.parseLong(o.get("sessionTimeoutMs"))))
                .build()) {
            say("STARTED");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (o.get("mode").equals("hold")) {
                flights.submit(o.get("key"), Duration.ofMinutes(5), () -> {
                    say("RUNNING " + o.get("key"));
                    new CountDownLatch(1).await();
                    return new byte[0];
                });
                while (in.readLine() != null) {
                    // wait for the kill, or for the test JVM to go
                }
                return;
            }
            String line;
            while ((line = in.readLine()) != null) {
                String[] w = line.trim().split(" ");
                if (w.length == 4 && w[0].equals("go")) {
                    fire(
                            flights,
                            w[1],
                            Integer.parseInt(w[2]),
                            Long.parseLong(w[3]),
                            "from-" + ProcessHandle.current().pid(),
                            SingleFlightMain::say);
                }
            }
        }
    }

    /**
     * Fires {@code requests} concurrent requests for {@code key} (released together), each with a
     * work that takes {@code workMs}; reports RAN and ANSWERED lines (without the marker) to {@code
     * out}; returns when all are answered.
     */
    public static void fire(
            SingleFlight flights,
            String key,
            int requests,
            long workMs,
            String payload,
            java.util.function.Consumer<String> out)
            throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch answered = new CountDownLatch(requests);
        for (int i = 0; i < requests; i++) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    CompletableFuture<byte[]> f = flights.submit(key, Duration.ofMinutes(5), () -> {
                        long start = micros();
                        Thread.sleep(workMs);
                        out.accept("RAN " + key + " " + start + " " + micros());
                        return payload.getBytes(StandardCharsets.UTF_8);
                    });
                    f.whenComplete((v, e) -> {
                        out.accept("ANSWERED " + key + " " + micros() + " " + (e == null ? "ok" : "error:" + e));
                        answered.countDown();
                    });
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.setDaemon(true);
            t.start();
        }
        go.countDown();
        answered.await();
        out.accept("FIRED " + key);
    }

    /** Wall-clock microseconds: comparable across JVMs of one machine. */
    public static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    static void say(String line) {
        System.out.println("@@ " + line);
        System.out.flush();
    }
}
