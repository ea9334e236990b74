package io.pidpool.it.bench;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.advice.UsageAssembly;
import io.pidpool.core.advice.UsageAssembly.ModuleFacts;
import io.pidpool.core.advice.UsageAssembly.PidFacts;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.server.redis.RedisUsageReader;
import io.pidpool.server.usage.UsageMetrics;
import io.pidpool.server.usage.UsageReports;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.LongSupplier;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RMap;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The leader's full usage scan at scale (docs/benchmarks-quota.md, "Leader full scan"): {@code pids}
 * PIDs (default 100,000) provisioned in a real Redis in the ledger's key layout (16 shards; each PID
 * a {@code pids} entry and a month hash with {@code used}), then, interleaved over {@code rounds}
 * rounds after a warm-up:
 *
 * <ul>
 *   <li><b>scan</b>: {@link RedisUsageReader#read} (one Lua page per shard, all shards at once);
 *   <li><b>scan+project</b>: the same plus {@link UsageAssembly} and {@link UsageProjector} over
 *       {@code modules} modules (everything of the leader's scan but reading the database facts);
 *   <li><b>baseline pipelined</b>: the raw read of the same keys: one {@code HGETALL} of every
 *       shard's {@code pids} hash and then one {@code HGET used} per PID, all in one Redisson {@code
 *       RBatch} (pipelined, no script);
 *   <li><b>baseline round trips</b>: one synchronous {@code HGET} per PID on a sample of {@code
 *       sample} PIDs, extrapolated to all (what a naive loop would cost).
 * </ul>
 *
 * Optional: {@code scrape=1} also times {@link UsageMetrics#scrape()} of a report of all PIDs once
 * (per-PID gauges; give the JVM memory: {@code -Dbench.jvmArgs=-Xmx2g}).
 *
 * <p>Arguments ({@code key=value}): {@code pids} (100000), {@code modules} (100), {@code rounds} (7),
 * {@code sample} (5000), {@code pageHint} (1000), {@code scrape} (0), {@code redis} (a URL; default:
 * a redis-server of its own, no persistence). Not a test: prints a Markdown table, asserts nothing.
 */
public final class UsageScanBenchmark {
    private UsageScanBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new LinkedHashMap<>(Map.of(
                "pids", "100000",
                "modules", "100",
                "rounds", "7",
                "sample", "5000",
                "pageHint", "1000",
                "scrape", "0",
                "redis", ""));
        for (String arg : args) {
            String[] kv = arg.split("=", 2);
            if (kv.length != 2 || !opts.containsKey(kv[0])) {
                throw new IllegalArgumentException("unknown argument " + arg + "; known: " + opts.keySet());
            }
            opts.put(kv[0], kv[1]);
        }
        int pids = Integer.parseInt(opts.get("pids"));
        int modules = Integer.parseInt(opts.get("modules"));
        int rounds = Integer.parseInt(opts.get("rounds"));
        int sample = Math.min(pids, Integer.parseInt(opts.get("sample")));
        int pageHint = Integer.parseInt(opts.get("pageHint"));
        boolean scrape = !opts.get("scrape").equals("0");

        RedisProcess own = opts.get("redis").isEmpty() ? RedisProcess.start(false) : null;
        String url = own != null ? own.url() : opts.get("redis");
        // a loaded machine stalls the 100,000-command baseline batch for seconds: long timeouts
        RedissonClient redisson = RedisSupport.client(
                url, config -> config.useSingleServer().setTimeout(60_000).setRetryAttempts(0));
        QuotaKeys keys = new QuotaKeys(RedisSupport.randomCluster(), QuotaKeys.DEFAULT_SHARDS);
        MonthlyWindow window = new MonthlyWindow(ZoneOffset.UTC);
        QuotaMonth month = window.monthOf(Instant.now());
        try {
            System.out.printf(
                    Locale.ROOT,
                    "usage scan benchmark: %,d PIDs, %d modules, %d shards, redis %s (%s), load %s%n",
                    pids,
                    modules,
                    keys.shards(),
                    url,
                    own != null ? "own redis-server" : "given",
                    load());
            String[] ids = new String[pids];
            Map<String, Long> expected = populate(redisson, keys, month, ids);
            List<PidFacts> facts = new ArrayList<>(pids);
            List<ModuleFacts> moduleFacts = new ArrayList<>(modules);
            for (int m = 0; m < modules; m++) {
                moduleFacts.add(new ModuleFacts(ModuleConfig.of(module(m), 4), 4));
            }
            for (int i = 0; i < pids; i++) {
                facts.add(new PidFacts(ids[i], module(i % modules), PidAvailability.ACTIVE, 10_000, 1_000));
            }
            OverageTariff tariff =
                    OverageTariff.of(OverageTariff.Tier.of(1_000, "0.01"), OverageTariff.Tier.unbounded("0.008"));
            RedisUsageReader reader = new RedisUsageReader(redisson, keys, pageHint, Duration.ofMinutes(2));

            // correctness first: the scan sees what was written
            RedisUsageReader.Read check = reader.read(month);
            if (!check.used().equals(expected)) {
                throw new IllegalStateException("the scan read other counters than were written");
            }
            int trips = check.roundTrips();

            Map<String, LongSupplier> cases = new LinkedHashMap<>();
            cases.put(
                    "scan (RedisUsageReader)",
                    () -> reader.read(month).counters().size());
            cases.put("scan + assemble + project", () -> {
                RedisUsageReader.Read read = reader.read(month);
                UsageReport report = UsageProjector.blended()
                        .project(UsageAssembly.assemble(Instant.now(), window, tariff, moduleFacts, facts, read.used())
                                .snapshot());
                return report.pids().size();
            });
            cases.put("baseline: pipelined HGETALL + HGET per PID (RBatch)", () -> pipelined(redisson, keys, month));
            Map<String, List<Long>> nanos = new LinkedHashMap<>();
            Map<String, List<Long>> redisCpu = new LinkedHashMap<>();
            cases.keySet().forEach(k -> nanos.put(k, new ArrayList<>()));
            cases.keySet().forEach(k -> redisCpu.put(k, new ArrayList<>()));
            int port = RedisSupport.port(url);
            List<Long> perTrip = new ArrayList<>();

            // warm-up: JIT, Redis caches
            for (int w = 0; w < 2; w++) {
                for (LongSupplier c : cases.values()) {
                    c.getAsLong();
                }
                roundTrips(redisson, keys, month, ids, Math.min(sample, 1_000));
            }
            for (int r = 0; r < rounds; r++) {
                for (Map.Entry<String, LongSupplier> c : cases.entrySet()) {
                    double cpu0 = redisCpuSeconds(port);
                    long t0 = System.nanoTime();
                    long n = c.getValue().getAsLong();
                    nanos.get(c.getKey()).add(System.nanoTime() - t0);
                    redisCpu.get(c.getKey()).add((long) ((redisCpuSeconds(port) - cpu0) * 1e9));
                    if (n != pids) {
                        throw new IllegalStateException(c.getKey() + " saw " + n + " PIDs, not " + pids);
                    }
                }
                long t0 = System.nanoTime();
                roundTrips(redisson, keys, month, ids, sample);
                perTrip.add((System.nanoTime() - t0) / sample);
            }

            long baseline = median(nanos.get("baseline: pipelined HGETALL + HGET per PID (RBatch)"));
            long loop = median(perTrip) * pids;
            System.out.println();
            System.out.printf(
                    Locale.ROOT,
                    "| case | median of %d rounds | min | max | redis-server CPU (median) | vs pipelined baseline | vs one round trip per PID |%n",
                    rounds);
            System.out.println("|---|---:|---:|---:|---:|---:|---:|");
            for (Map.Entry<String, List<Long>> e : nanos.entrySet()) {
                long med = median(e.getValue());
                System.out.printf(
                        Locale.ROOT,
                        "| %s | %s | %s | %s | %s | %.2f× | %.3f× |%n",
                        e.getKey(),
                        ms(med),
                        ms(e.getValue().stream()
                                .mapToLong(Long::longValue)
                                .min()
                                .orElseThrow()),
                        ms(e.getValue().stream()
                                .mapToLong(Long::longValue)
                                .max()
                                .orElseThrow()),
                        ms(median(redisCpu.get(e.getKey()))),
                        (double) med / baseline,
                        (double) med / loop);
            }
            System.out.printf(
                    Locale.ROOT,
                    "| baseline: one synchronous HGET per PID (%,d sampled, extrapolated to %,d) | %s | | | | %.2f× | 1× |%n",
                    sample,
                    pids,
                    ms(loop),
                    (double) loop / baseline);
            System.out.printf(
                    Locale.ROOT,
                    "%nscan: %d script calls for %,d PIDs (pageHint %d); target <= 1 s for 100,000: median scan %s%n",
                    trips,
                    pids,
                    pageHint,
                    ms(median(nanos.get("scan (RedisUsageReader)"))));

            if (scrape) {
                RedisUsageReader.Read read = reader.read(month);
                UsageReport report = UsageProjector.blended()
                        .project(UsageAssembly.assemble(Instant.now(), window, tariff, moduleFacts, facts, read.used())
                                .snapshot());
                UsageMetrics metrics = new UsageMetrics(
                        UsageReports.of(report),
                        new UsageMetrics.ServerState() {
                            @Override
                            public boolean isLeader() {
                                return true;
                            }

                            @Override
                            public long epoch() {
                                return 1;
                            }

                            @Override
                            public long heldPids() {
                                return pids;
                            }
                        },
                        null,
                        null);
                long t0 = System.nanoTime();
                int first = metrics.scrape().length();
                long t1 = System.nanoTime();
                int second = metrics.scrape().length();
                long t2 = System.nanoTime();
                System.out.printf(
                        Locale.ROOT,
                        "/metrics for %,d PIDs: first scrape (registers the gauges) %s, %,d bytes; next scrape %s, %,d bytes%n",
                        pids,
                        ms(t1 - t0),
                        first,
                        ms(t2 - t1),
                        second);
            }
            System.out.printf(Locale.ROOT, "load at the end: %s%n", load());
        } finally {
            try {
                RedisSupport.drop(redisson, keys);
            } finally {
                redisson.shutdown();
                if (own != null) {
                    own.close();
                }
            }
        }
    }

    static ModuleKey module(int m) {
        return ModuleKey.parse("dept" + m + "#mod#sys");
    }

    /** Writes every PID's pids entry and month counter in the ledger's layout, pipelined. */
    static Map<String, Long> populate(RedissonClient redisson, QuotaKeys keys, QuotaMonth month, String[] ids) {
        Random random = new Random(7);
        Map<String, Long> used = new HashMap<>(ids.length * 2);
        int chunk = 5_000;
        for (int from = 0; from < ids.length; from += chunk) {
            RBatch batch = redisson.createBatch();
            for (int i = from; i < Math.min(ids.length, from + chunk); i++) {
                String pid = String.format(Locale.ROOT, "pid-%06d", i);
                ids[i] = pid;
                long u = random.nextInt(12_000);
                used.put(pid, u);
                batch.<String, String>getMap(keys.pids(keys.shardOf(pid)), StringCodec.INSTANCE)
                        .fastPutAsync(pid, "11000|1");
                batch.<String, String>getMap(keys.usage(pid, month), StringCodec.INSTANCE)
                        .fastPutAsync("used", Long.toString(u));
            }
            batch.execute();
        }
        return used;
    }

    /** The baseline: the same keys read without a script, pipelined in one batch per step. */
    static long pipelined(RedissonClient redisson, QuotaKeys keys, QuotaMonth month) {
        RBatch listing = redisson.createBatch();
        List<RFuture<Map<String, String>>> shards = new ArrayList<>();
        for (int s = 0; s < keys.shards(); s++) {
            shards.add(listing.<String, String>getMap(keys.pids(s), StringCodec.INSTANCE)
                    .readAllMapAsync());
        }
        listing.execute();
        RBatch reads = redisson.createBatch();
        List<String> order = new ArrayList<>();
        List<RFuture<String>> used = new ArrayList<>();
        for (RFuture<Map<String, String>> shard : shards) {
            for (String pid : shard.toCompletableFuture().join().keySet()) {
                order.add(pid);
                used.add(reads.<String, String>getMap(keys.usage(pid, month), StringCodec.INSTANCE)
                        .getAsync("used"));
            }
        }
        reads.execute();
        long n = 0;
        for (RFuture<String> u : used) {
            if (u.toCompletableFuture().join() != null) {
                n++;
            }
        }
        return n;
    }

    /** One synchronous HGET per PID, for {@code count} PIDs. */
    static void roundTrips(RedissonClient redisson, QuotaKeys keys, QuotaMonth month, String[] ids, int count) {
        for (int i = 0; i < count; i++) {
            RMap<String, String> map = redisson.getMap(keys.usage(ids[i], month), StringCodec.INSTANCE);
            if (map.get("used") == null) {
                throw new IllegalStateException("no counter for " + ids[i]);
            }
        }
    }

    static double redisCpuSeconds(int port) {
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

    static long median(List<Long> values) {
        long[] sorted = values.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }

    static String load() {
        return String.format(
                Locale.ROOT,
                "%.1f",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
}
