package io.pidpool.client.internal;

import io.pidpool.client.PidAccount;

/** How a listener callback ended; sent from the callback thread back to the state thread. */
sealed interface Outcome {
    /** {@code onAssigned} returned: the PID is held with this account. */
    record Assigned(PidAccount account) implements Outcome {}

    /** {@code onUpdated} returned: the PID is still held, now with this account. */
    record Updated(PidAccount after) implements Outcome {}

    /** {@code onRevoked} returned (or threw): the PID is no longer held. */
    record Revoked() implements Outcome {}

    /** Opening the secret, {@code onAssigned} or {@code onUpdated} threw; reported in the node. */
    record Failed(String reason) implements Outcome {}
}
