package io.pidpool.client;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.DefaultSingleFlight;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.client.internal.zk.ZkSessions;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.core.singleflight.FlightRecord;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;

/**
 * A cluster single-flight: for one key, one server of the cluster runs the work and every other
 * caller, in this process or another, receives its result.
 *
 * <pre>{@code
 * try (SingleFlight flights = SingleFlight.builder()
 *         .connectString("127.0.0.1:2181").cluster("default").build()) {
 *     String report = flights.run("report:2026-11", Duration.ofMinutes(10), SingleFlight.Codec.utf8(),
 *             () -> buildMonthlyReport());
 * }
 * }</pre>
 *
 * <p><b>Guarantees.</b> Per key, at most one participant runs the work at a time (the holder of an
 * EPHEMERAL lock node). Callers of one process share one flight per key: only one of them competes
 * in ZooKeeper. The holder writes the result <em>before</em> it releases the lock, so whoever sees
 * the lock gone and no result knows the holder died without one, and competes again: after a holder
 * crash, partition or session expiry the work runs once more. A holder that lost its lock cannot
 * write any more (its writes are fenced by its own session and the result node's version); it
 * takes the newer holder's result instead. A SUCCESS stays readable for its {@code retention}, so
 * callers arriving within it get it without running anything.
 *
 * <p><b>Failures.</b> If the work throws, every caller that waited for that round gets a {@link
 * io.pidpool.core.singleflight.FlightFailedException}; the next caller runs the work again. A caller
 * that is not the holder gets {@link io.pidpool.core.error.PidPoolException} {@code UNAVAILABLE}
 * after {@link Builder#maxWait} or when ZooKeeper cannot be reached. Bad input is an {@code
 * INVALID_ARGUMENT} at once.
 *
 * <p><b>Limits.</b> Keys: 1-128 characters of {@code [A-Za-z0-9_.:-]}. Results: at most {@link
 * #MAX_RESULT_BYTES} (512 KiB); a larger one is a failure of the round. Expired results are deleted
 * by a sweep every {@link Builder#sweepInterval} (or {@link #purgeExpired()}); ZooKeeper then removes
 * the key's empty container node.
 *
 * <p>Thread-safe. The work runs on an SDK thread ({@code single-flight-<n>}), not the caller's.
 */
public interface SingleFlight extends AutoCloseable {
    /** Largest result, in bytes (512 KiB). */
    int MAX_RESULT_BYTES = FlightRecord.MAX_VALUE_BYTES;

    static Builder builder() {
        return new Builder();
    }

    /**
     * The result of {@code work} for {@code key}, run once in the cluster; completes with a copy of
     * the bytes, or exceptionally (see the class comment). A caller that finds a flight of {@code
     * key} in progress in this process joins it, and its own {@code work} and {@code retention} are
     * not used.
     *
     * @param retention how long the result stays readable for later callers (at least 1 ms)
     * @throws io.pidpool.core.error.PidPoolException {@code INVALID_ARGUMENT} for a bad key,
     *     retention or work; {@code ILLEGAL_STATE} after {@link #close()}
     */
    CompletableFuture<byte[]> submit(String key, Duration retention, Callable<byte[]> work);

    /**
     * Blocking form of {@link #submit} with a codec: waits for the result and decodes it.
     *
     * @throws io.pidpool.core.singleflight.FlightFailedException the round's work threw
     * @throws io.pidpool.core.error.PidPoolException {@code UNAVAILABLE} (no result within {@code
     *     maxWait}, ZooKeeper unreachable, or interrupted), {@code INVALID_ARGUMENT} (bad input, or
     *     a stored value the codec cannot decode)
     */
    <T> T run(String key, Duration retention, Codec<T> codec, Callable<T> work);

    /** Deletes the expired results of keys nobody holds now; returns how many. */
    int purgeExpired();

    /** Stops the sweep and the SDK threads; closes the ZooKeeper client if the builder made it. */
    @Override
    void close();

    /** Turns results into bytes and back; must be pure and thread-safe. */
    interface Codec<T> {
        byte[] encode(T value);

        T decode(byte[] bytes);

        static Codec<String> utf8() {
            return new Codec<>() {
                @Override
                public byte[] encode(String value) {
                    return value.getBytes(StandardCharsets.UTF_8);
                }

                @Override
                public String decode(byte[] bytes) {
                    return new String(bytes, StandardCharsets.UTF_8);
                }
            };
        }

        static Codec<byte[]> bytes() {
            return new Codec<>() {
                @Override
                public byte[] encode(byte[] value) {
                    return value;
                }

                @Override
                public byte[] decode(byte[] bytes) {
                    return bytes;
                }
            };
        }
    }

    /** Builds a {@link SingleFlight}. Setters validate at once (PidPoolException INVALID_ARGUMENT). */
    final class Builder {
        private CuratorFramework curator;
        private String connectString;
        private Duration sessionTimeout = Duration.ofSeconds(5);
        private String cluster = ZkLayout.DEFAULT_CLUSTER;
        private ZkAuth zkAuth = ZkAuth.none();
        private Duration maxWait = Duration.ofSeconds(60);
        private Duration sweepInterval = Duration.ofMinutes(1);
        private Clock clock = Clock.systemUTC();
        private Ticker ticker = Ticker.system();

        private Builder() {}

        /** ZooKeeper ensemble {@code host:port[,host:port...]}; the single-flight owns its client. */
        public Builder connectString(String connectString) {
            this.connectString = ZkSessions.requireConnectString(connectString);
            return this;
        }

        /**
         * A started client whose session becomes this participant's (it is never closed here). Paths
         * are resolved under {@code pidpool/<cluster>} whatever namespace it has.
         */
        public Builder curator(CuratorFramework curator) {
            this.curator = requireNonNull(curator, "curator");
            return this;
        }

        /** Session timeout to ask for, for an owned client; default 5 s. A dead holder is replaced after it. */
        public Builder sessionTimeout(Duration timeout) {
            this.sessionTimeout = ZkSessions.requireSessionTimeout(timeout);
            return this;
        }

        /** Cluster name: keys live under {@code /pidpool/<cluster>/single-flight}. Default {@code default}. */
        public Builder cluster(String cluster) {
            this.cluster = Names.requireToken(cluster, "cluster");
            return this;
        }

        /**
         * The cluster's ZooKeeper digest identity {@code user:password} (default none): the session
         * authenticates with it and new nodes get the cluster's ACL. Never logged.
         */
        public Builder zookeeperAuth(String userColonPassword) {
            this.zkAuth = ZkAuth.digest(userColonPassword);
            return this;
        }

        /** How long a caller that is not the holder waits for a result; default 60 s. */
        public Builder maxWait(Duration maxWait) {
            requireArgument(
                    maxWait != null && maxWait.toMillis() >= 1,
                    "maxWait",
                    "maxWait must be at least 1 ms, was %s",
                    maxWait);
            this.maxWait = maxWait;
            return this;
        }

        /** How often expired results are deleted; default 1 min; {@link Duration#ZERO}: never. */
        public Builder sweepInterval(Duration interval) {
            requireArgument(
                    interval != null && !interval.isNegative(),
                    "sweepInterval",
                    "sweepInterval must not be negative, was %s",
                    interval);
            this.sweepInterval = interval;
            return this;
        }

        /** Stamps result expiry (wall time, compared across servers); default {@link Clock#systemUTC()}. */
        public Builder clock(Clock clock) {
            this.clock = requireNonNull(clock, "clock");
            return this;
        }

        /** Measures {@code maxWait}: a nanosecond clock; default {@link System#nanoTime()}. */
        public Builder ticker(LongSupplier nanoTime) {
            requireNonNull(nanoTime, "ticker");
            this.ticker = nanoTime::getAsLong;
            return this;
        }

        public SingleFlight build() {
            requireArgument(
                    (curator == null) != (connectString == null),
                    "connectString",
                    "give exactly one of curator(...) and connectString(...)");
            return DefaultSingleFlight.open(
                    curator, connectString, sessionTimeout, cluster, zkAuth, maxWait, sweepInterval, clock, ticker);
        }
    }
}
