package io.pidpool.worker.runtime;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.ring.ConsistentHashRing;
import java.time.Duration;

/**
 * Tuning of one worker. The defaults suit pid-server's in-process worker; see {@code
 * docs/worker.md} for the arithmetic that ties lease, handler timeout and poll interval together.
 *
 * @param virtualNodes this worker's points on the ring (balance: max/min share about 1.1-1.2 at 512)
 * @param batchSize tasks claimed with one conditional update
 * @param concurrency handler threads running at once
 * @param rangesPerQuery owned ranges covered by one fetch statement (OR of range predicates)
 * @param pollInterval wait after a sweep found nothing; also how long an empty range is skipped
 * @param lease how long a claim is exclusive; an expired claim goes back to PENDING
 * @param handlerTimeout a handler still running after this is interrupted and counted failed
 * @param retryBackoff delay before the second attempt; doubles per attempt
 * @param maxRetryBackoff cap of the retry delay
 * @param reapInterval how often this worker returns expired leases of its group
 * @param backlogInterval how often this worker counts the backlog of its ranges
 * @param doneRetention DONE tasks older than this are deleted (0: keep them)
 * @param purgeInterval how often this worker deletes old DONE tasks
 * @param shutdownTimeout how long a graceful close waits for running handlers and settlements
 */
public record WorkerConfig(
        int virtualNodes,
        int batchSize,
        int concurrency,
        int rangesPerQuery,
        Duration pollInterval,
        Duration lease,
        Duration handlerTimeout,
        Duration retryBackoff,
        Duration maxRetryBackoff,
        Duration reapInterval,
        Duration backlogInterval,
        Duration doneRetention,
        Duration purgeInterval,
        Duration shutdownTimeout) {

    public WorkerConfig {
        ConsistentHashRing.requireVirtualNodes(virtualNodes);
        requireArgument(
                batchSize >= 1 && batchSize <= 1000, "batchSize", "batchSize must be in 1..1000, was %d", batchSize);
        requireArgument(
                concurrency >= 1 && concurrency <= 256,
                "concurrency",
                "concurrency must be in 1..256, was %d",
                concurrency);
        requireArgument(
                rangesPerQuery >= 1 && rangesPerQuery <= 4096,
                "rangesPerQuery",
                "rangesPerQuery must be in 1..4096, was %d",
                rangesPerQuery);
        positive(pollInterval, "pollInterval");
        positive(lease, "lease");
        positive(handlerTimeout, "handlerTimeout");
        positive(retryBackoff, "retryBackoff");
        positive(maxRetryBackoff, "maxRetryBackoff");
        positive(reapInterval, "reapInterval");
        positive(backlogInterval, "backlogInterval");
        requireArgument(
                doneRetention != null && !doneRetention.isNegative(), "doneRetention", "doneRetention must be >= 0");
        positive(purgeInterval, "purgeInterval");
        positive(shutdownTimeout, "shutdownTimeout");
        // a handler must be interrupted well before its lease ends, or the task could run twice at once
        requireArgument(
                handlerTimeout.multipliedBy(2).compareTo(lease) <= 0,
                "handlerTimeout",
                "handlerTimeout (%s) must be at most half the lease (%s)",
                handlerTimeout,
                lease);
        requireArgument(
                maxRetryBackoff.compareTo(retryBackoff) >= 0,
                "maxRetryBackoff",
                "maxRetryBackoff must be >= retryBackoff");
    }

    public static WorkerConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.virtualNodes = virtualNodes;
        b.batchSize = batchSize;
        b.concurrency = concurrency;
        b.rangesPerQuery = rangesPerQuery;
        b.pollInterval = pollInterval;
        b.lease = lease;
        b.handlerTimeout = handlerTimeout;
        b.retryBackoff = retryBackoff;
        b.maxRetryBackoff = maxRetryBackoff;
        b.reapInterval = reapInterval;
        b.backlogInterval = backlogInterval;
        b.doneRetention = doneRetention;
        b.purgeInterval = purgeInterval;
        b.shutdownTimeout = shutdownTimeout;
        return b;
    }

    /**
     * How long after a claim a handler of the batch may still start: {@code lease - handlerTimeout -
     * lease/10}. A handler started then ends (or is interrupted) by {@code lease - lease/10}; the
     * last tenth of the lease covers settling and clock skew between workers.
     */
    public Duration latestStartAfterClaim() {
        return lease.minus(handlerTimeout).minus(lease.dividedBy(10));
    }

    /** Retry delay after the {@code attempts}-th failed attempt: {@code retryBackoff * 2^(attempts-1)}, capped. */
    public Duration backoffAfter(int attempts) {
        int doublings = Math.max(0, Math.min(attempts - 1, 30));
        Duration d = retryBackoff.multipliedBy(1L << doublings);
        return d.compareTo(maxRetryBackoff) > 0 ? maxRetryBackoff : d;
    }

    private static void positive(Duration d, String field) {
        requireArgument(d != null && !d.isNegative() && !d.isZero(), field, "%s must be positive, was %s", field, d);
    }

    /** Mutable builder with the defaults. */
    public static final class Builder {
        private int virtualNodes = 512;
        private int batchSize = 100;
        private int concurrency = 8;
        private int rangesPerQuery = 1024;
        private Duration pollInterval = Duration.ofMillis(500);
        private Duration lease = Duration.ofSeconds(30);
        private Duration handlerTimeout = Duration.ofSeconds(10);
        private Duration retryBackoff = Duration.ofSeconds(1);
        private Duration maxRetryBackoff = Duration.ofMinutes(5);
        private Duration reapInterval = Duration.ofSeconds(5);
        private Duration backlogInterval = Duration.ofSeconds(30);
        private Duration doneRetention = Duration.ofDays(7);
        private Duration purgeInterval = Duration.ofMinutes(10);
        private Duration shutdownTimeout = Duration.ofSeconds(30);

        public Builder virtualNodes(int v) {
            this.virtualNodes = v;
            return this;
        }

        public Builder batchSize(int v) {
            this.batchSize = v;
            return this;
        }

        public Builder concurrency(int v) {
            this.concurrency = v;
            return this;
        }

        public Builder rangesPerQuery(int v) {
            this.rangesPerQuery = v;
            return this;
        }

        public Builder pollInterval(Duration v) {
            this.pollInterval = v;
            return this;
        }

        public Builder lease(Duration v) {
            this.lease = v;
            return this;
        }

        public Builder handlerTimeout(Duration v) {
            this.handlerTimeout = v;
            return this;
        }

        public Builder retryBackoff(Duration v) {
            this.retryBackoff = v;
            return this;
        }

        public Builder maxRetryBackoff(Duration v) {
            this.maxRetryBackoff = v;
            return this;
        }

        public Builder reapInterval(Duration v) {
            this.reapInterval = v;
            return this;
        }

        public Builder backlogInterval(Duration v) {
            this.backlogInterval = v;
            return this;
        }

        public Builder doneRetention(Duration v) {
            this.doneRetention = v;
            return this;
        }

        public Builder purgeInterval(Duration v) {
            this.purgeInterval = v;
            return this;
        }

        public Builder shutdownTimeout(Duration v) {
            this.shutdownTimeout = v;
            return this;
        }

        public WorkerConfig build() {
            return new WorkerConfig(
                    virtualNodes,
                    batchSize,
                    concurrency,
                    rangesPerQuery,
                    pollInterval,
                    lease,
                    handlerTimeout,
                    retryBackoff,
                    maxRetryBackoff,
                    reapInterval,
                    backlogInterval,
                    doneRetention,
                    purgeInterval,
                    shutdownTimeout);
        }
    }
}
