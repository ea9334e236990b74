package io.pidpool.it.bench;

import io.pidpool.core.allocation.AllocationPlanner;
import io.pidpool.core.allocation.ClusterSnapshot;
import io.pidpool.core.allocation.DepartedInstance;
import io.pidpool.core.allocation.LiveInstance;
import io.pidpool.core.allocation.ModuleSnapshot;
import io.pidpool.core.allocation.Plan;
import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.allocation.PlannerState;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;

/**
 * JMH benchmark of the pure planner ({@link AllocationPlanner#plan}) at the target size: 100,000 PIDs
 * over 1,000 instances, in one module and spread over 20 modules, in four situations:
 *
 * <ul>
 *   <li>{@code STEADY}: every instance holds its even share (ADDED), the previous plan's state is
 *       passed: the plan is empty (checked in the setup);
 *   <li>{@code INITIAL}: 1,000 live instances holding nothing: every PID is added;
 *   <li>{@code JOIN}: the settled cluster plus one instance joining the first module;
 *   <li>{@code LEAVE}: one instance of the first module departed (crashed) longer ago than the grace.
 * </ul>
 *
 * <p>Baseline in the same run: {@link HashBaselineBenchmark} puts 100,000 PIDs into a {@link HashMap}
 * — the least any planner that looks at each PID once must do. {@link #main} runs both with JMH and
 * prints each case's time as a multiple of that baseline. The snapshots are built in the setup;
 * only {@code plan(...)} is measured. Command: docs/benchmarks.md.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class PlannerBenchmark {
    static final int PIDS = 100_000;
    static final int INSTANCES = 1_000;
    static final long NOW = 1_000_000_000_000L;
    static final Duration GRACE = Duration.ofSeconds(10);

    /** Which cluster picture is planned. */
    public enum Scenario {
        STEADY,
        INITIAL,
        JOIN,
        LEAVE
    }

    @Param({"1", "20"})
    public int modules;

    @Param({"STEADY", "INITIAL", "JOIN", "LEAVE"})
    public Scenario scenario;

    private AllocationPlanner planner;
    private ClusterSnapshot snapshot;
    private PlannerState state;

    @Setup(Level.Trial)
    public void setUp() {
        planner = new AllocationPlanner(
                PlannerPolicy.defaults(GRACE).withMoveLimits(PIDS, PIDS).withRebalanceDelay(Duration.ZERO));
        ClusterSnapshot settled = build(modules, scenario == Scenario.INITIAL, false, false);
        // the state a leader carries after the cluster settled
        PlannerState settledState =
                planner.plan(settled, PlannerState.EMPTY, NOW - 1).nextState();
        switch (scenario) {
            case STEADY -> {
                snapshot = settled;
                state = settledState;
                Plan plan = planner.plan(snapshot, state, NOW);
                if (!plan.isEmpty()) {
                    throw new IllegalStateException("steady state should plan nothing, got "
                            + plan.steps().size());
                }
            }
            case INITIAL -> {
                snapshot = settled;
                state = PlannerState.EMPTY;
            }
            case JOIN -> {
                snapshot = build(modules, false, true, false);
                state = settledState;
            }
            case LEAVE -> {
                snapshot = build(modules, false, false, true);
                state = settledState;
            }
        }
    }

    /**
     * The planning thread's CPU time, summed over a measurement iteration (JMH reports it next to the
     * wall time). On the shared machine wall time includes preemption by other processes; the thread's
     * CPU time does not (nor the GC threads' work, which {@code -prof gc}'s allocation figure stands for).
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class CpuTime {
        public long cpuNanos;
        public long calls;

        @Setup(Level.Iteration)
        public void reset() {
            cpuNanos = 0;
            calls = 0;
        }
    }

    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Benchmark
    public Plan plan(CpuTime cpu) {
        long start = THREADS.getCurrentThreadCpuTime();
        Plan plan = planner.plan(snapshot, state, NOW);
        cpu.cpuNanos += THREADS.getCurrentThreadCpuTime() - start;
        cpu.calls++;
        return plan;
    }

    /**
     * {@code modules} modules sharing the PIDs and instances evenly; every instance holds its share
     * (ADDED) unless {@code empty}; {@code joiner}: one more instance in the first module; {@code leave}:
     * the first module's first instance departed (crashed) longer ago than the grace.
     */
    static ClusterSnapshot build(int modules, boolean empty, boolean joiner, boolean leave) {
        List<ModuleSnapshot> snapshots = new ArrayList<>();
        int pidsPerModule = PIDS / modules;
        int instancesPerModule = INSTANCES / modules;
        int perInstance = pidsPerModule / instancesPerModule;
        int pid = 0;
        long order = 0;
        for (int m = 0; m < modules; m++) {
            ModuleKey key = ModuleKey.parse("dept#mod" + m + "#sys");
            var desired = new LinkedHashSet<String>(pidsPerModule * 2);
            List<LiveInstance> live = new ArrayList<>(instancesPerModule + 1);
            List<DepartedInstance> departed = new ArrayList<>();
            for (int i = 0; i < instancesPerModule; i++) {
                var held = new HashMap<String, PidState>(perInstance * 2);
                for (int k = 0; k < perInstance; k++) {
                    String id = "pid-" + pid++;
                    desired.add(id);
                    if (!empty) {
                        held.put(id, PidState.ADDED);
                    }
                }
                long session = order;
                if (leave && m == 0 && i == 0) {
                    departed.add(
                            DepartedInstance.crashed("m" + m + "-i" + i, session, NOW - GRACE.toNanos() - 1, held));
                } else {
                    live.add(new LiveInstance(InstanceId.of("m" + m + "-i" + i), session, 1, order, held));
                }
                order++;
            }
            if (joiner && m == 0) {
                live.add(new LiveInstance(InstanceId.of("m0-joiner"), order, 1, order++, Map.of()));
            }
            snapshots.add(new ModuleSnapshot(
                    ModuleConfig.of(key, Math.min(instancesPerModule, ModuleConfig.MAX_SERVERS)),
                    desired,
                    live,
                    departed));
        }
        return new ClusterSnapshot(snapshots);
    }

    /**
     * Runs JMH with the given command line (default {@code -f 1 -wi 3 -i 5 -w 1s -r 1s}; {@code -prof gc}
     * is always added) on this class and prints every case as a multiple of the hash baseline: wall
     * time, the planning thread's CPU time per call, and the bytes allocated per call.
     */
    public static void main(String[] args) throws Exception {
        // JMH keeps its lock file in java.io.tmpdir, which the bench profile points into target/
        java.nio.file.Files.createDirectories(java.nio.file.Path.of(System.getProperty("java.io.tmpdir")));
        String[] jmhArgs =
                args.length == 0 ? new String[] {"-f", "1", "-wi", "3", "-i", "5", "-w", "1s", "-r", "1s"} : args;
        List<String> withInclude = new ArrayList<>(List.of(jmhArgs));
        if (!withInclude.contains("gc")) {
            withInclude.addAll(List.of("-prof", "gc"));
        }
        withInclude.add(PlannerBenchmark.class.getName() + ".plan$");
        withInclude.add(HashBaselineBenchmark.class.getName());
        Collection<RunResult> results = new Runner(new CommandLineOptions(withInclude.toArray(String[]::new))).run();
        RunResult base = null;
        Map<String, RunResult> byKey = new TreeMap<>();
        for (RunResult r : results) {
            if (r.getParams().getBenchmark().startsWith(HashBaselineBenchmark.class.getName())) {
                base = r;
            } else {
                byKey.put(
                        r.getParams().getParam("modules") + "/" + r.getParams().getParam("scenario"), r);
            }
        }
        double baseWall = base == null ? Double.NaN : base.getPrimaryResult().getScore();
        double baseCpu = base == null ? Double.NaN : cpuMs(base);
        System.out.println();
        System.out.println(String.format(
                Locale.ROOT,
                "hash baseline: %.2f ms/op wall (± %.2f), %.2f ms CPU per call, %.1f MB/op allocated",
                baseWall,
                base == null ? Double.NaN : base.getPrimaryResult().getScoreError(),
                baseCpu,
                allocatedMb(base)));
        System.out.println("| modules | scenario | wall ms/op (± error) | CPU ms/call | alloc MB/op | wall ratio to"
                + " baseline | CPU ratio to baseline | target 50 ms (wall) |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        for (var e : byKey.entrySet()) {
            RunResult r = e.getValue();
            var primary = r.getPrimaryResult();
            double cpuMs = cpuMs(r);
            String[] key = e.getKey().split("/");
            System.out.println(String.format(
                    Locale.ROOT,
                    "| %s | %s | %.2f (± %.2f) | %.2f | %.1f | %.2f× | %.2f× | %s |",
                    key[0],
                    key[1],
                    primary.getScore(),
                    primary.getScoreError(),
                    cpuMs,
                    allocatedMb(r),
                    primary.getScore() / baseWall,
                    cpuMs / baseCpu,
                    primary.getScore() <= 50 ? "met" : "MISSED"));
        }
    }

    /** The planning thread's CPU time per call, from the {@link CpuTime} counters. */
    private static double cpuMs(RunResult r) {
        Map<String, Result> secondary = r.getSecondaryResults();
        return score(secondary, "cpuNanos") / score(secondary, "calls") / 1e6;
    }

    private static double score(Map<String, Result> secondary, String name) {
        Result result = secondary.get(name);
        return result == null ? Double.NaN : result.getScore();
    }

    /** {@code -prof gc}'s normalized allocation, in MB per call. */
    private static double allocatedMb(RunResult r) {
        return r == null ? Double.NaN : score(r.getSecondaryResults(), "gc.alloc.rate.norm") / 1e6;
    }
}
