package io.pidpool.client.internal;

import io.pidpool.client.PidAccount;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out the tracker's decisions ({@link Action}s): logins and updates go to the call lane,
 * revocations to the revocation lane ({@link ListenerDispatch}), answers to the {@link AckWriter}. A
 * login or update may begin only while the lease of the session it was decided in is valid, so that
 * it ends (returns or is abandoned at the deadline) by the lease end + D, the bound the leader's
 * grace counts on (docs/sdk.md "Timing").
 *
 * <p>Concurrency: {@link #run} on the state thread; the check before a call on a callback thread.
 */
final class ActionRunner {
    private static final Logger log = LoggerFactory.getLogger(ActionRunner.class);

    /** Port: the two callback lanes ({@link ListenerDispatch} in production). */
    interface Callbacks {
        void call(String pid, Supplier<Outcome> body, Supplier<Outcome> overrun);

        void revoke(String pid, Supplier<Outcome> body);

        static Callbacks of(ListenerDispatch dispatch) {
            return new Callbacks() {
                @Override
                public void call(String pid, Supplier<Outcome> body, Supplier<Outcome> overrun) {
                    dispatch.call(pid, body, overrun);
                }

                @Override
                public void revoke(String pid, Supplier<Outcome> body) {
                    dispatch.revoke(pid, body);
                }
            };
        }
    }

    /** What the check before a call reads of its client (any thread). */
    interface Gate {
        /** Whether the client's gate is open. */
        boolean granting();

        /** The session the client is connected on, as last reported (0 while suspended or lost). */
        long liveSession();

        /** The client's ticker, in nanoseconds. */
        long now();
    }

    private final Callbacks callbacks;
    private final ListenerInvoker invoker;
    private final AckWriter writer;
    private final PidTracker tracker;
    private final Lease lease;
    private final Gate gate;
    private final long deadlineMillis;

    ActionRunner(
            Callbacks callbacks,
            ListenerInvoker invoker,
            AckWriter writer,
            PidTracker tracker,
            Lease lease,
            Gate gate,
            long deadlineMillis) {
        this.callbacks = callbacks;
        this.invoker = invoker;
        this.writer = writer;
        this.tracker = tracker;
        this.lease = lease;
        this.gate = gate;
        this.deadlineMillis = deadlineMillis;
    }

    /** State thread: hands each action to its lane or to the writer. */
    void run(List<Action> actions) {
        long session = tracker.sessionId(); // the session these actions belong to
        for (Action a : actions) {
            if (a instanceof Action.Assign x) {
                AtomicReference<PidAccount> given = new AtomicReference<>();
                callbacks.call(
                        x.pid(),
                        () -> mayStart(session) ? invoker.assign(x.view().node(), given::set) : notStarted(x),
                        () -> new Outcome.Overran(given.get(), overrun("onAssigned")));
            } else if (a instanceof Action.Update x) {
                callbacks.call(
                        x.pid(),
                        () -> mayStart(session)
                                ? invoker.update(x.before(), x.view().node())
                                : notStarted(x),
                        () -> new Outcome.Overran(x.before(), overrun("onUpdated")));
            } else if (a instanceof Action.Revoke x) {
                // its own lane: a revocation never waits behind logins (ListenerDispatch)
                callbacks.revoke(x.pid(), () -> invoker.revoke(x.account(), x.why()));
            } else if (a instanceof Action.Write x) {
                writer.queue(x);
            }
        }
    }

    /** A callback thread, right before {@code onAssigned}/{@code onUpdated}. */
    boolean mayStart(long session) {
        // the lease of the session the call was decided in: a call that waited in the lane while that
        // session was lost must not start under the next one (its PID may be someone else's by now)
        return gate.granting() && session == gate.liveSession() && lease.isValid(gate.now(), session);
    }

    private static Outcome notStarted(Action a) {
        log.info(
                "PID {}: not calling the listener, the session is not provably alive; decided again on resume",
                a.pid());
        return new Outcome.NotStarted();
    }

    private String overrun(String callback) {
        return callback + " did not return within the callback deadline of " + deadlineMillis + " ms";
    }
}
