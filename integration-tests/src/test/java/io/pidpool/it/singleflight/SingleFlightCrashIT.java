package io.pidpool.it.singleflight;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.SingleFlight;
import io.pidpool.client.internal.DefaultSingleFlight;
import io.pidpool.it.zk.ZooKeepers;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** The holder of a single-flight is a separate JVM, killed with SIGKILL while it runs the work. */
class SingleFlightCrashIT {
    @Test
    void aWaiterTakesOverFromAKilledHolderAndRunsTheWorkOnceMore() throws Exception {
        String key = "crash:report";
        try (TestingServer zk = ZooKeepers.standalone();
                FlightProcess holder = FlightProcess.start(
                        "flight-holder",
                        List.of(
                                "connect=" + zk.getConnectString(),
                                "mode=hold",
                                "key=" + key,
                                "sessionTimeoutMs=1000"));
                DefaultSingleFlight waiter = (DefaultSingleFlight) SingleFlight.builder()
                        .connectString(zk.getConnectString())
                        .sessionTimeout(Duration.ofSeconds(1))
                        .build()) {
            holder.awaitLine("RUNNING", Duration.ofSeconds(30));
            AtomicInteger runs = new AtomicInteger();
            var answer = waiter.submit(key, Duration.ofMinutes(1), () -> {
                runs.incrementAndGet();
                return "from-waiter".getBytes(UTF_8);
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> waiter.waiting() == 1);

            long killedAt = System.nanoTime();
            holder.kill();

            assertThat(new String(answer.get(30, TimeUnit.SECONDS), UTF_8)).isEqualTo("from-waiter");
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            assertThat(runs).hasValue(1); // once in the killed holder, once more here
            assertThat(holder.lines().stream().filter(l -> l.startsWith("RUNNING")))
                    .hasSize(1);
            // the dead holder's lock goes with its session: about the session timeout, never much later
            assertThat(tookMs).isLessThan(10_000);
        }
    }
}
