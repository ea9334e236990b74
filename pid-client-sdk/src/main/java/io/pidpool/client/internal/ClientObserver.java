package io.pidpool.client.internal;

/**
 * What a {@link DefaultPidClient} reports about itself as it runs, for metrics ({@code
 * io.pidpool.client.internal.metrics}). Every method is called on the thread where the event happens (state,
 * callback, revocation or caller threads), so implementations must be thread-safe, must not block
 * and must not throw (a throwing observer is logged and ignored by the caller). Public only because
 * the builder and the binder live in other packages; not an API.
 */
public interface ClientObserver {
    /** Observes nothing. */
    ClientObserver NONE = new ClientObserver() {};

    /** The values a metrics binder samples when asked, rather than being told. */
    interface Gauges {
        /** How many PIDs {@code heldPids()} answers right now. */
        int heldPids();

        /** Seconds until the lease runs out; 0 when it has (or there is no registration). */
        double leaseMarginSeconds();
    }

    /** A callback of the listener. */
    enum Callback {
        ON_ASSIGNED("onAssigned"),
        ON_UPDATED("onUpdated"),
        ON_REVOKED("onRevoked");

        private final String tag;

        Callback(String tag) {
            this.tag = tag;
        }

        public String tag() {
            return tag;
        }
    }

    /** The outcome of one {@code refund}. */
    enum RefundOutcome {
        /** Applied now. */
        APPLIED,
        /** The same refund id was applied before; nothing changed. */
        REPEATED,
        /** Refused: unknown deduction, above the deduction, or the refund id used with another amount. */
        REJECTED,
        /** Redis did not answer (or another error): the caller should retry with the same refund id. */
        ERROR
    }

    /** {@code start()} began; {@code gauges} stay valid until {@link #closed()}. */
    default void started(String module, Gauges gauges) {}

    /** A listener callback returned ({@code ok}) or threw, after {@code nanos}. */
    default void callback(Callback callback, boolean ok, long nanos) {}

    /** A PID is being revoked ({@code onRevoked} is about to run). */
    default void revoked(RevokeCause cause) {}

    /** A {@code tryAcquire} (or its async form) answered: granted, denied (empty) or failed. */
    default void permit(boolean granted) {}

    /** A {@code tryAcquire} failed with an exception (Redis or the worker slot not answering). */
    default void permitError() {}

    /** A {@code refund} ended so. */
    default void refund(RefundOutcome outcome) {}

    /** {@code close()} finished. */
    default void closed() {}
}
