package io.pidpool.client.internal;

import io.pidpool.client.PidAccount;

/** How a listener callback ended; sent from the callback thread back to the state thread. */
sealed interface Outcome {
    /** {@code onAssigned} returned: the PID is held with this account. */
    record Assigned(PidAccount account) implements Outcome {}

    /** {@code onUpdated} returned: the PID is still held, now with this account. */
    record Updated(PidAccount after) implements Outcome {}

    /** {@code onRevoked} returned: the PID is no longer held; {@code why} it was revoked, for the log. */
    record Revoked(String why) implements Outcome {
        Revoked() {
            this("");
        }
    }

    /**
     * {@code onRevoked} threw: the PID is no longer used, but the logout may have failed, so the client
     * does not answer DELETED; it reports {@code reason} in the node instead (docs/sdk.md).
     */
    record RevokeFailed(String reason) implements Outcome {}

    /** Opening the secret, {@code onAssigned} or {@code onUpdated} threw; reported in the node. */
    record Failed(String reason) implements Outcome {}

    /**
     * {@code onAssigned}/{@code onUpdated} did not return within the callback deadline and was
     * abandoned: the PID is not held, {@code account} (the one the listener was given; {@code null}
     * if the call never reached the listener) is logged out with {@code onRevoked}, and {@code reason}
     * is reported in the node.
     */
    record Overran(PidAccount account, String reason) implements Outcome {}

    /**
     * The call did not start: the client's lease was not valid when its turn came (it may not begin a
     * login it cannot finish in time). The observation is decided again when the client grants again.
     */
    record NotStarted() implements Outcome {}
}
