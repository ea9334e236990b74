package io.pidpool.client.internal.quota;

import io.pidpool.client.Permit;
import io.pidpool.client.internal.quota.QuotaScripts.Script;
import io.pidpool.client.internal.quota.testing.FakeHold;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.id.SnowflakeIds;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Throughput of permits against the bare deduct script, measured in one JVM run. Not a test: its name
 * matches neither surefire's nor failsafe's patterns and it only runs with {@code -Dpidpool.bench=true}:
 *
 * <pre>
 * mvn -B -o verify -pl pid-client-sdk -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=QuotaBenchmark -Dfailsafe.failIfNoSpecifiedTests=false -Dpidpool.bench=true
 * </pre>
 *
 * Redis: a redis-server of its own on a free port (no persistence), or {@code -Dpidpool.bench.redis=URL}.
 * Every case runs once to warm up (JIT), then {@code ROUNDS} measured rounds, interleaved; the median
 * round is reported. Results go to stdout and {@code target/benchmarks-quota.txt}.
 */
@EnabledIfSystemProperty(named = "pidpool.bench", matches = "true")
class QuotaBenchmark {
    private static final Duration WARMUP = Duration.ofSeconds(Long.getLong("pidpool.bench.warmup", 3));
    private static final Duration MEASURE = Duration.ofMillis(Long.getLong("pidpool.bench.millis", 1000));
    private static final int ROUNDS = Integer.getInteger("pidpool.bench.rounds", 15);
    private static final Set<String> PIDS = Set.of("b0", "b1", "b2", "b3");

    private final QuotaMonth month = new MonthlyWindow(ZoneOffset.UTC).current(Clock.systemUTC());

    @FunctionalInterface
    interface Op {
        void run(int thread, long i);
    }

    /** Operations per second of {@code op} on {@code threads} threads for {@code duration}. */
    static double rate(Op op, int threads, Duration duration) throws InterruptedException {
        AtomicLong total = new AtomicLong();
        java.util.concurrent.atomic.AtomicReference<RuntimeException> failure =
                new java.util.concurrent.atomic.AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        long[] window = new long[2];
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread w = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                long deadline = System.nanoTime() + duration.toNanos();
                long n = 0;
                try {
                    while (System.nanoTime() < deadline) {
                        op.run(thread, n++);
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
                total.addAndGet(n);
            });
            w.start();
            workers.add(w);
        }
        window[0] = System.nanoTime();
        go.countDown();
        for (Thread w : workers) {
            w.join();
        }
        window[1] = System.nanoTime();
        if (failure.get() != null) {
            throw failure.get();
        }
        return total.get() / ((window[1] - window[0]) / 1e9);
    }

    @Test
    void permitsPerSecond() throws Exception {
        String url = System.getProperty("pidpool.bench.redis");
        RedisProcess own = url == null ? RedisProcess.start(false) : null;
        String redisUrl = url != null ? url : own.url();
        boolean epoll = Boolean.getBoolean("pidpool.bench.epoll");
        RedissonClient redisson = RedisSupport.client(redisUrl, c -> {
            c.useSingleServer().setConnectionPoolSize(32).setConnectionMinimumIdleSize(16);
            if (epoll) {
                c.setTransportMode(org.redisson.config.TransportMode.EPOLL);
            }
        });
        String cluster = RedisSupport.randomCluster();
        try (RedissonQuotaLedger ledger =
                RedisSupport.ledger(redisson, cluster, "bench").build()) {
            PIDS.forEach(p -> ledger.setLimit(p, MonthLedger.MAX_AMOUNT));
            QuotaKeys keys = ledger.keys();
            FakeHold hold = new FakeHold(PIDS);
            PermitIssuer direct = PermitIssuer.builder()
                    .ledger(ledger)
                    .held(hold)
                    .ids(SnowflakeIds.builder().workerId(1).build())
                    .build();
            PermitIssuer batched = PermitIssuer.builder()
                    .ledger(ledger)
                    .held(hold)
                    .ids(SnowflakeIds.builder().workerId(2).build())
                    .batching(128)
                    .build();

            // the bare script: the same deduct script with the same keys and arguments, straight evalSha
            RScript script = redisson.getScript(StringCodec.INSTANCE);
            String[] pidArray = PIDS.toArray(String[]::new);
            List<List<Object>> bareKeys = new ArrayList<>();
            for (String p : pidArray) {
                int s = keys.shardOf(p);
                bareKeys.add(List.of(
                        keys.pids(s),
                        keys.usage(p, month),
                        keys.events(s),
                        keys.sequences(s),
                        keys.deductionIndex(s, month)));
            }
            String expireAt = Long.toString(System.currentTimeMillis() / 1000 + 86_400 * 100L);
            AtomicLong bareIds = new AtomicLong();
            Op bare = (thread, i) -> {
                int k = (int) (i % pidArray.length);
                List<Object> ks = bareKeys.get(k);
                script.evalSha(
                        (String) ks.get(0),
                        RScript.Mode.READ_WRITE,
                        Script.DEDUCT.sha,
                        RScript.ReturnType.MULTI,
                        ks,
                        pidArray[k],
                        month.key(),
                        "bare-" + bareIds.incrementAndGet(),
                        "1",
                        expireAt,
                        "bench",
                        "inc");
            };
            Op acquire = (thread, i) -> direct.tryAcquire(1).orElseThrow();
            Op acquireBatched = (thread, i) -> batched.tryAcquire(1).orElseThrow();
            // the same issuer, but each thread keeps up to 16 acquires in flight (no park per permit)
            ThreadLocal<java.util.ArrayDeque<java.util.concurrent.CompletableFuture<Optional<Permit>>>> windows =
                    ThreadLocal.withInitial(java.util.ArrayDeque::new);
            PermitIssuer batchedAsync = PermitIssuer.builder()
                    .ledger(ledger)
                    .held(hold)
                    .ids(SnowflakeIds.builder().workerId(8).build())
                    .batching(128)
                    .build();
            Op acquireAsync = (thread, i) -> {
                var window = windows.get();
                window.add(batchedAsync.tryAcquireAsync(1));
                if (window.size() >= 16) {
                    window.poll().join().orElseThrow();
                }
            };
            // the same with up to 2 / 3 batches on the wire (pipelined on the connection)
            PermitIssuer batchedAsync2 = PermitIssuer.builder()
                    .ledger(ledger)
                    .held(hold)
                    .ids(SnowflakeIds.builder().workerId(9).build())
                    .batching(128)
                    .maxInFlight(2)
                    .build();
            PermitIssuer batchedAsync3 = PermitIssuer.builder()
                    .ledger(ledger)
                    .held(hold)
                    .ids(SnowflakeIds.builder().workerId(10).build())
                    .batching(128)
                    .maxInFlight(3)
                    .build();
            Op acquireAsync2 = asyncWindow(batchedAsync2);
            Op acquireAsync3 = asyncWindow(batchedAsync3);
            PermitIssuer batchedAsync4 = PermitIssuer.builder()
                    .ledger(ledger)
                    .held(hold)
                    .ids(SnowflakeIds.builder().workerId(11).build())
                    .batching(128)
                    .maxInFlight(4)
                    .build();
            Op acquireAsync4 = asyncWindow(batchedAsync4);
            PermitIssuer batched2 = PermitIssuer.builder()
                    .ledger(ledger)
                    .held(hold)
                    .ids(SnowflakeIds.builder().workerId(4).build())
                    .batching(128)
                    .maxInFlight(2)
                    .build();
            Op acquireBatched2 = (thread, i) -> batched2.tryAcquire(1).orElseThrow();

            // "clearly not enough": PIDs whose whole limit is used, checked from the near cache
            Set<String> dry = Set.of("dry0", "dry1", "dry2", "dry3");
            for (String p : dry) {
                ledger.setLimit(p, 1);
                ledger.tryDeduct(p, month, 1, "fill");
            }
            hold.hold(PIDS); // unchanged for the permit cases
            PermitIssuer dryIssuer = PermitIssuer.builder()
                    .ledger(RedisSupport.ledger(redisson, cluster, "bench-dry")
                            .maxObservationAge(Duration.ofHours(1))
                            .metaTtl(Duration.ofHours(1))
                            .build())
                    .held(new FakeHold(dry))
                    .ids(SnowflakeIds.builder().workerId(3).build())
                    .build();
            QuotaNearCache near = dryIssuer.ledger().nearCache();
            for (String p : dry) {
                dryIssuer.ledger().usage(p, month); // one observation each
                for (int i = 0; i < 1000 && !near.clearlyNotEnough(p, month, 1); i++) {
                    Thread.onSpinWait(); // the local entry loads in the background (bounded spin)
                }
            }
            for (String p : dry) {
                if (!near.clearlyNotEnough(p, month, 1)) {
                    throw new IllegalStateException("near cache not ready for " + p);
                }
            }
            Op nearCheck = (thread, i) -> {
                if (!near.clearlyNotEnough("dry" + (i & 3), month, 1)) {
                    throw new IllegalStateException("expected a clear no");
                }
            };
            Op dryAcquire = (thread, i) -> {
                if (dryIssuer.tryAcquire(1).isPresent()) {
                    throw new IllegalStateException("expected no permit");
                }
            };
            Op roundTrip = (thread, i) -> ledger.usage("dry" + (i & 3), month);

            List<Case> cases = List.of(
                    new Case("bare1", "bare evalSha, 1 thread", bare, 1),
                    new Case("direct1", "tryAcquire direct, 1 thread", acquire, 1),
                    new Case("bare8", "bare evalSha, 8 threads", bare, 8),
                    new Case("direct8", "tryAcquire direct, 8 threads", acquire, 8),
                    new Case("batched8", "tryAcquire batched, 8 threads", acquireBatched, 8),
                    new Case("async8", "tryAcquireAsync batched, 8 threads x 16 in flight", acquireAsync, 8),
                    new Case(
                            "async8x2",
                            "tryAcquireAsync batched (2 batches in flight), 8 threads x 16",
                            acquireAsync2,
                            8),
                    new Case(
                            "async8x3",
                            "tryAcquireAsync batched (3 batches in flight), 8 threads x 16",
                            acquireAsync3,
                            8),
                    new Case(
                            "async8x4",
                            "tryAcquireAsync batched (4 batches in flight), 8 threads x 16",
                            acquireAsync4,
                            8),
                    new Case("batched8x2", "tryAcquire batched (2 batches in flight), 8 threads", acquireBatched2, 8),
                    new Case("near1", "near cache clearlyNotEnough, 1 thread", nearCheck, 1),
                    new Case("dry1", "tryAcquire, all held PIDs dry (near cache), 1 thread", dryAcquire, 1),
                    new Case("trip1", "Redis round trip (usage script), 1 thread", roundTrip, 1));
            String only = System.getProperty("pidpool.bench.cases", "");
            List<Case> selected = cases.stream()
                    .filter(c -> only.isBlank() || List.of(only.split(",")).contains(c.id()))
                    .toList();
            int redisPort = RedisSupport.port(redisUrl);
            for (Case c : selected) {
                rate(c.op(), c.threads(), WARMUP);
            }
            Map<Case, List<double[]>> results = new LinkedHashMap<>();
            for (int r = 0; r < ROUNDS; r++) {
                for (Case c : selected) {
                    results.computeIfAbsent(c, k -> new ArrayList<>()).add(measure(c, redisPort));
                }
            }

            StringBuilder out = new StringBuilder();
            out.append(String.format(
                    "Redis %s (transport %s), %d cores, load average %.1f, warm-up %s per case, %d interleaved rounds of %s;"
                            + " median rate; CPU microseconds per operation (client JVM / redis-server)%n",
                    redisUrl,
                    epoll ? "EPOLL" : "NIO",
                    Runtime.getRuntime().availableProcessors(),
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                            .getSystemLoadAverage(),
                    WARMUP,
                    ROUNDS,
                    MEASURE));
            Map<String, Double> median = new LinkedHashMap<>();
            results.forEach((c, rounds) -> {
                double m = median(rounds, 0);
                median.put(c.id(), m);
                out.append(String.format(
                        "%-55s %,12.0f /s   cpu %7.1f / %5.1f us/op   rounds %s%n",
                        c.name(), m, median(rounds, 1), median(rounds, 2), fmt(rounds)));
            });
            out.append(String.format(
                    "batched mode: %.1f deductions per round trip on average (%.1f with 2 in flight, %.1f async,"
                            + " %.1f async 2 in flight, %.1f async 3 in flight, %.1f async 4 in flight)%n",
                    batched.averageBatch(),
                    batched2.averageBatch(),
                    batchedAsync.averageBatch(),
                    batchedAsync2.averageBatch(),
                    batchedAsync3.averageBatch(),
                    batchedAsync4.averageBatch()));
            out.append("ratios: median over rounds of (case / baseline measured in the same round)\n");
            ratio(out, results, "direct1", "bare1", "tryAcquire / bare, 1 thread");
            ratio(out, results, "direct8", "bare8", "tryAcquire / bare, 8 threads");
            ratio(out, results, "batched8", "bare8", "batched / bare, 8 threads");
            ratio(out, results, "async8", "bare8", "batched async (16 per thread) / bare, 8 threads");
            ratio(out, results, "async8x2", "bare8", "batched async, 2 in flight / bare, 8 threads");
            ratio(out, results, "async8x3", "bare8", "batched async, 3 in flight / bare, 8 threads");
            ratio(out, results, "async8x4", "bare8", "batched async, 4 in flight / bare, 8 threads");
            ratio(out, results, "batched8x2", "bare8", "batched (2 in flight) / bare, 8 threads");
            ratio(out, results, "near1", "trip1", "near-cache check / Redis round trip");
            System.out.print(out);
            Path file = Path.of("target", "benchmarks-quota.txt");
            Files.createDirectories(file.getParent());
            Files.writeString(file, out.toString());
            direct.close();
            batched.close();
            batchedAsync.close();
            batchedAsync2.close();
            batchedAsync3.close();
            batchedAsync4.close();
            batched2.close();
            dryIssuer.close();
            dryIssuer.ledger().close();
            if (own == null) {
                try {
                    RedisSupport.drop(redisson, keys); // an own server is thrown away instead
                } catch (RuntimeException e) {
                    System.out.println("could not drop the benchmark's keys: " + e);
                }
            }
        } finally {
            redisson.shutdown();
            if (own != null) {
                own.close();
            }
        }
    }

    /** Each thread keeps up to 16 acquires of {@code issuer} in flight (waits for the oldest). */
    static Op asyncWindow(PermitIssuer issuer) {
        ThreadLocal<java.util.ArrayDeque<java.util.concurrent.CompletableFuture<Optional<Permit>>>> windows =
                ThreadLocal.withInitial(java.util.ArrayDeque::new);
        return (thread, i) -> {
            var window = windows.get();
            window.add(issuer.tryAcquireAsync(1));
            if (window.size() >= 16) {
                window.poll().join().orElseThrow();
            }
        };
    }

    record Case(String id, String name, Op op, int threads) {}

    /** {rate, client CPU us/op, redis CPU us/op} of one measured round. */
    private static double[] measure(Case c, int redisPort) throws InterruptedException {
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        double redis0 = redisCpuSeconds(redisPort);
        long t0 = System.nanoTime();
        double rate = rate(c.op(), c.threads(), MEASURE);
        double seconds = (System.nanoTime() - t0) / 1e9;
        double ops = rate * seconds;
        double clientUs = (os.getProcessCpuTime() - cpu0) / 1e3 / ops;
        double redisUs = (redisCpuSeconds(redisPort) - redis0) * 1e6 / ops;
        return new double[] {rate, clientUs, redisUs};
    }

    private static double redisCpuSeconds(int port) {
        String info = RedisProcess.command(port, "INFO", "cpu");
        double total = 0;
        for (String line : info == null ? new String[0] : info.split("\r?\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                total +=
                        Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return total;
    }

    private static double median(List<double[]> rounds, int i) {
        List<Double> sorted = rounds.stream().map(r -> r[i]).sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    private static void ratio(StringBuilder out, Map<Case, List<double[]>> results, String a, String b, String label) {
        List<double[]> ra = byId(results, a);
        List<double[]> rb = byId(results, b);
        if (ra == null || rb == null) {
            return;
        }
        List<Double> paired = new ArrayList<>();
        for (int i = 0; i < Math.min(ra.size(), rb.size()); i++) {
            paired.add(ra.get(i)[0] / rb.get(i)[0]);
        }
        List<Double> sorted = paired.stream().sorted().toList();
        out.append(String.format(
                "%-40s %.2f   per round %s%n",
                label,
                sorted.get(sorted.size() / 2),
                paired.stream().map(r -> String.format("%.2f", r)).toList()));
    }

    private static List<double[]> byId(Map<Case, List<double[]>> results, String id) {
        return results.entrySet().stream()
                .filter(e -> e.getKey().id().equals(id))
                .map(Map.Entry::getValue)
                .findFirst()
                .orElse(null);
    }

    private static String fmt(List<double[]> rounds) {
        return rounds.stream().map(r -> String.format("%,.0f", r[0])).toList().toString();
    }
}
