package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.port.Ticker;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The leader measures what a pass cost on its own thread's CPU clock: work done meanwhile by other
 * threads (other processes, a GC) must not count as the pass's cost.
 */
class ThreadCpuTickerTest {

    @Test
    void aThreadThatOnlyWaitsWhileAnotherWorksIsChargedLessThanTheWorker() throws Exception {
        Ticker cpu = ThreadCpuTicker.orElse(() -> {
            throw new AssertionError("this JVM measures thread CPU time");
        });
        AtomicLong workerCost = new AtomicLong();
        AtomicLong sink = new AtomicLong();
        Thread worker = new Thread(() -> {
            long start = cpu.read();
            long x = 0;
            for (int i = 0; i < 200_000_000; i++) {
                x += i * 31L ^ (x >>> 7);
            }
            sink.set(x);
            workerCost.set(cpu.read() - start);
        });

        long start = cpu.read();
        worker.start();
        worker.join(); // this thread waits the whole time the worker works
        long waiterCost = cpu.read() - start;

        assertThat(workerCost.get()).isPositive();
        // on the wall clock the waiter's interval contains the worker's, so it would be the larger
        assertThat(waiterCost).isLessThan(workerCost.get());
    }

    @Test
    void theFallbackIsUsedOnlyWhereThreadCpuTimeIsNotMeasured() {
        Ticker fallback = () -> 42;
        Ticker ticker = ThreadCpuTicker.orElse(fallback);
        boolean supported =
                java.lang.management.ManagementFactory.getThreadMXBean().isCurrentThreadCpuTimeSupported();
        assertThat(ticker == fallback).isEqualTo(!supported);
    }
}
