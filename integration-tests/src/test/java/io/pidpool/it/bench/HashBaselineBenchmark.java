package io.pidpool.it.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The baseline {@link PlannerBenchmark} is compared with: 100,000 PID names put into a {@link HashMap},
 * the least work a planner that looks at every PID once must do.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class HashBaselineBenchmark {
    private List<String> pids;

    @Setup(Level.Trial)
    public void setUp() {
        pids = new ArrayList<>(PlannerBenchmark.PIDS);
        for (int i = 0; i < PlannerBenchmark.PIDS; i++) {
            pids.add("pid-" + i);
        }
    }

    @Benchmark
    public Map<String, Integer> hashAllPids(PlannerBenchmark.CpuTime cpu) {
        long start = PlannerBenchmark.THREADS.getCurrentThreadCpuTime();
        Map<String, Integer> index = new HashMap<>(pids.size() * 2);
        for (int i = 0; i < pids.size(); i++) {
            index.put(pids.get(i), i);
        }
        cpu.cpuNanos += PlannerBenchmark.THREADS.getCurrentThreadCpuTime() - start;
        cpu.calls++;
        return index;
    }
}
