package io.pidpool.client.internal.ids;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.SnowflakeIds;
import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.port.WorkerIdRegistry;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One slot being used by {@link ClusterSnowflakeIds}: its generator and its reservation, the
 * timestamp up to which the slot's {@link SlotMark} in ZooKeeper allows ids. The reservation only
 * moves forward, under this object's monitor, through the registry's holder-only mark write; once
 * that fails the slot is {@link #stopped} for good, and {@link #release} says whether the slot is
 * provably someone else's.
 *
 * <p>Thread-safe: the flags are volatile, and {@link #extend} and {@link #lowerMark} hold the monitor.
 */
final class ReservedSlot {
    /** Logs as the generator it belongs to: operators set log levels for {@code ClusterSnowflakeIds}. */
    private static final Logger log = LoggerFactory.getLogger(ClusterSnowflakeIds.class);

    final WorkerSlot slot;
    final SnowflakeIds ids;
    volatile long reservedUntil;
    /** The timestamp of the last id returned: the reservation is renewed ahead only while ids flow. */
    volatile long lastIssued;

    volatile boolean stopped;
    /** The slot is provably not ours: release it before taking one again. */
    volatile boolean release;

    private final CuratorWorkerIdRegistry registry;
    private final Clock clock;
    private final long reservationMillis;

    ReservedSlot(
            WorkerSlot slot,
            SnowflakeIds ids,
            long reservedUntil,
            CuratorWorkerIdRegistry registry,
            Clock clock,
            long reservationMillis) {
        this.slot = slot;
        this.ids = ids;
        this.reservedUntil = reservedUntil;
        this.registry = registry;
        this.clock = clock;
        this.reservationMillis = reservationMillis;
    }

    /** Moves the reservation past {@code timestamp}; {@code false} (and stops) if that fails. */
    boolean extend(long timestamp) {
        synchronized (this) {
            if (timestamp <= reservedUntil) {
                return true;
            }
            if (stopped) {
                return false;
            }
            long target = Math.max(timestamp, clock.millis()) + reservationMillis;
            try {
                if (registry.reserve(slot, target)) {
                    reservedUntil = target;
                    return true;
                }
                release = true;
                log.warn("Worker id {} is no longer ours; stopped issuing with it", slot.workerId());
            } catch (PidPoolException e) {
                log.warn("Could not renew the reservation of worker id {}: {}", slot.workerId(), e.getMessage());
            }
            stopped = true;
            return false;
        }
    }

    /**
     * On a graceful close (after {@link #stopped} was set): lowers the mark to the last id actually
     * issued, so a successor need not wait for the reservation to pass. Best effort.
     */
    void lowerMark() {
        synchronized (this) {
            // callers that got an id before this line are within ids.lastTimestampMillis();
            // later ones see stopped and discard theirs
            long last = Math.min(reservedUntil, ids.lastTimestampMillis());
            try {
                registry.reserve(slot, last);
            } catch (PidPoolException e) {
                log.debug("Could not lower the mark of worker id {}: {}", slot.workerId(), e.getMessage());
            }
        }
    }

    /** The loss listener of one acquisition; tells the {@link ReservedSlot} built from it, even if late. */
    static final class Ticket implements WorkerIdRegistry.LossListener {
        volatile boolean lost;
        volatile ReservedSlot active;

        @Override
        public void onLost(WorkerSlot slot) {
            lost = true;
            ReservedSlot a = active;
            if (a != null) {
                a.stopped = true;
            }
        }

        void bind(ReservedSlot a) {
            active = a;
            if (lost) {
                a.stopped = true;
            }
        }
    }
}
