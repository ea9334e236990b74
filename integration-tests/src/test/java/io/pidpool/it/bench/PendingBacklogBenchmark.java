package io.pidpool.it.bench;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.OperationLog;
import io.pidpool.core.port.Repositories;
import io.pidpool.server.jdbc.Database;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a new batch's validation reads while older batches wait for the leader (a leader change, a
 * database hiccup, a burst of big batches): {@link OperationLog#pendingEffects} for the PIDs a new
 * batch names, against the baseline of loading every waiting batch in full ({@link
 * OperationLog#findUnfinished}, what the validation read before). H2 in a file, through the real
 * adapters; {@code backlog} waiting batches of {@code pids} PIDs each, a new batch naming {@code
 * asked} PIDs. Prints milliseconds per read, median of {@code rounds}, and the ratio. Not a test:
 * nothing asserts. Command: docs/benchmarks.md.
 */
public final class PendingBacklogBenchmark {
    private PendingBacklogBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, Integer> o = new LinkedHashMap<>();
        o.put("backlog", 16);
        o.put("pids", 10_000);
        o.put("asked", 10_000);
        o.put("rounds", 7);
        AllocationBenchmark.parseArgs(args, o);
        Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "backlog");
        try (Database db = Database.open("jdbc:h2:file:" + dir.resolve("db") + ";DB_CLOSE_ON_EXIT=FALSE", null, null)) {
            Repositories repos = db.repositories(Clock.systemUTC());
            SealedSecret secret = new SealedSecret("k1", "sealed-password-bytes".getBytes(StandardCharsets.UTF_8));
            ModuleKey module = ModuleKey.parse("dept#bench#backlog");
            for (int b = 0; b < o.get("backlog"); b++) {
                List<PidSpec<SealedSecret>> specs = new ArrayList<>();
                for (int i = 0; i < o.get("pids"); i++) {
                    specs.add(new PidSpec<>("b" + b + "-" + i, secret, 1000, 0, Map.of()));
                }
                repos.operations()
                        .append(BatchRecord.pending(
                                new BatchId(1000 + b),
                                List.of(new Operation.Add<>(module, specs)),
                                "ops",
                                Instant.now()));
            }
            Set<String> asked = new HashSet<>();
            for (int i = 0; i < o.get("asked"); i++) {
                asked.add("new-" + i);
            }
            List<Double> full = new ArrayList<>();
            List<Double> effects = new ArrayList<>();
            for (int r = 0; r < o.get("rounds"); r++) {
                long t0 = System.nanoTime();
                int batches = repos.operations().findUnfinished(1000).size();
                long t1 = System.nanoTime();
                int ops = repos.operations().pendingEffects(asked, 1000).size();
                long t2 = System.nanoTime();
                full.add((t1 - t0) / 1e6);
                effects.add((t2 - t1) / 1e6);
                System.out.printf(
                        Locale.ROOT,
                        "round %d: every waiting batch in full %.1f ms (%d batches); pending effects %.1f ms (%d"
                                + " operations)%n",
                        r,
                        (t1 - t0) / 1e6,
                        batches,
                        (t2 - t1) / 1e6,
                        ops);
            }
            double f = median(full);
            double e = median(effects);
            System.out.printf(
                    Locale.ROOT,
                    "SUMMARY %d waiting batches of %,d PIDs, a new batch naming %,d: pending effects %.1f ms,"
                            + " every batch in full %.1f ms (baseline); ratio %.3f (medians of %d rounds)%n",
                    o.get("backlog"),
                    o.get("pids"),
                    o.get("asked"),
                    e,
                    f,
                    e / f,
                    o.get("rounds"));
        }
        System.exit(0);
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        return sorted.get(sorted.size() / 2);
    }
}
