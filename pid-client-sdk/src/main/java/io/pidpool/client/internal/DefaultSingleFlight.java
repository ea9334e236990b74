package io.pidpool.client.internal;

import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.client.SingleFlight;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.client.internal.zk.ZkSessions;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.core.singleflight.SingleFlightEngine;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SingleFlight} over {@link SingleFlightEngine} and {@link CuratorFlightStore}.
 *
 * <p>Concurrency: thread-safe. Flights and their work run on a cached pool of daemon threads
 * ({@code single-flight-<n>}); {@code maxWait} timers and the sweep on one scheduler thread. {@code
 * closed} is set once.
 */
public final class DefaultSingleFlight implements SingleFlight {
    private static final Logger log = LoggerFactory.getLogger(DefaultSingleFlight.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final CuratorFramework curator;
    private final boolean ownsCurator;
    private final CuratorFlightStore store;
    private final SingleFlightEngine engine;
    private final ExecutorService workers;
    private final ScheduledExecutorService timer;
    private final ScheduledFuture<?> sweep;
    private final Clock clock;
    private final AtomicBoolean closed = new AtomicBoolean();

    private DefaultSingleFlight(
            CuratorFramework curator,
            boolean ownsCurator,
            String cluster,
            ZkAuth zkAuth,
            Duration maxWait,
            Duration sweepInterval,
            Clock clock,
            Ticker ticker) {
        this.curator = curator;
        this.ownsCurator = ownsCurator;
        this.clock = clock;
        int n = INSTANCES.incrementAndGet();
        AtomicInteger threads = new AtomicInteger();
        this.workers =
                Executors.newCachedThreadPool(r -> daemon(r, "single-flight-" + n + "-" + threads.incrementAndGet()));
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "single-flight-" + n + "-timer"));
        this.store = new CuratorFlightStore(
                curator,
                new ZkLayout(cluster).namespace(),
                zkAuth.acl(),
                timer,
                ManagementFactory.getRuntimeMXBean().getName());
        this.engine = new SingleFlightEngine(store, store, clock, ticker, workers, maxWait);
        this.sweep = sweepInterval.isZero()
                ? null
                : timer.scheduleWithFixedDelay(
                        this::sweepQuietly, sweepInterval.toMillis(), sweepInterval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Called by {@link SingleFlight.Builder#build()}; exactly one of {@code curator}, {@code connectString}. */
    public static DefaultSingleFlight open(
            CuratorFramework curator,
            String connectString,
            Duration sessionTimeout,
            String cluster,
            ZkAuth zkAuth,
            Duration maxWait,
            Duration sweepInterval,
            Clock clock,
            Ticker ticker) {
        if (curator != null) {
            ZkSessions.requireStarted(curator);
            return new DefaultSingleFlight(curator, false, cluster, zkAuth, maxWait, sweepInterval, clock, ticker);
        }
        CuratorFramework client = zkAuth.configure(
                        ZkSessions.clientBuilder(connectString, sessionTimeout), new ZkLayout(cluster).namespace())
                .build();
        client.start();
        try {
            return new DefaultSingleFlight(client, true, cluster, zkAuth, maxWait, sweepInterval, clock, ticker);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    @Override
    public CompletableFuture<byte[]> submit(String key, Duration retention, Callable<byte[]> work) {
        requireState(!closed.get(), "the single-flight is closed");
        return engine.fly(key, retention, work);
    }

    @Override
    public <T> T run(String key, Duration retention, Codec<T> codec, Callable<T> work) {
        requireNonNull(codec, "codec");
        requireNonNull(work, "work");
        CompletableFuture<byte[]> flight = submit(key, retention, () -> codec.encode(work.call()));
        byte[] bytes;
        try {
            bytes = flight.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable("interrupted while waiting for single-flight '" + key + "'", e);
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        }
        try {
            return codec.decode(bytes);
        } catch (RuntimeException e) {
            throw PidPoolException.invalid("result", "the result of single-flight '%s' cannot be decoded: %s", key, e);
        }
    }

    @Override
    public int purgeExpired() {
        requireState(!closed.get(), "the single-flight is closed");
        return store.purgeExpired(clock.millis());
    }

    /** Keys with a flight in progress in this process. */
    public int inFlight() {
        return engine.inFlight();
    }

    /** Flights of this process waiting for another participant's result now. */
    public int waiting() {
        return engine.waiting();
    }

    /** The ZooKeeper session of this participant (for tests and operators). */
    public CuratorFramework curator() {
        return curator;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (sweep != null) {
            sweep.cancel(false);
        }
        timer.shutdownNow();
        workers.shutdownNow();
        if (ownsCurator) {
            curator.close();
        }
    }

    private void sweepQuietly() {
        try {
            int purged = store.purgeExpired(clock.millis());
            if (purged > 0) {
                log.debug("single-flight: purged {} expired results", purged);
            }
        } catch (RuntimeException e) {
            log.debug("single-flight: sweep failed: {}", e.toString());
        }
    }

    private static RuntimeException unwrap(Throwable t) {
        Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return PidPoolException.unavailable("single-flight failed: " + cause, cause);
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
