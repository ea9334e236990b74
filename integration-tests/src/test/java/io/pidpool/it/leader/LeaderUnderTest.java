package io.pidpool.it.leader;

import io.pidpool.core.model.ModuleKey;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;

/**
 * The leader side of a fault scenario: whatever hands PIDs to the client JVMs through ZooKeeper
 * (docs/design.md §4). Scenarios talk to the leader only through this interface, so the same scenario runs
 * against the real pid-server ({@link ServerLeaderUnderTest}, the default) and {@link FakeLeaderUnderTest}.
 *
 * <p>What a scenario relies on (docs/design.md §4, docs/design.md §6):
 *
 * <ul>
 *   <li>it answers every registration in a module it knows and gives each free PID of the module to
 *       some live instance (liveness);
 *   <li>it writes ADDING for a PID to a new instance only after the previous holder answered DELETED,
 *       or after the holder's ephemeral node is gone <em>and</em> {@link #grace()} has passed since the
 *       leader observed that;
 *   <li>it writes nothing while its own ZooKeeper connection is suspended.
 * </ul>
 *
 * <p>PIDs added by {@link #addPids} have the password {@code pw-<pid>} (the client JVMs check it) and a
 * monthly quota of 100.
 */
public interface LeaderUnderTest extends AutoCloseable {

    /** Creates leaders; a scenario is parameterized with one of these. */
    interface Factory {
        /** A short name for logs and reports, e.g. {@code fake}. */
        String name();

        /**
         * A leader for {@code cluster} on the ensemble {@code connectString} that waits {@code grace}
         * after an instance's ephemeral node vanished before moving its PIDs. Not started.
         */
        LeaderUnderTest create(String connectString, String cluster, Duration grace);
    }

    /** Starts leading; returns once the leader answers registrations. */
    void start();

    /** Puts PIDs into {@code module}'s pool (as an operator ADD batch would); returns at once. */
    void addPids(ModuleKey module, Collection<String> pids);

    /** G: how long after observing an instance's ephemeral node gone the leader keeps its PIDs parked. */
    Duration grace();

    /**
     * The base64 AES key the leader seals PID passwords with (the clients get it to open them), or
     * empty if it seals with the SDK's {@code TestSecrets}.
     */
    default Optional<String> secretKey() {
        return Optional.empty();
    }

    /** The leader's current view, PID to instance id, for diagnostics and messages. */
    Map<String, String> assignments(ModuleKey module);

    /** Stops leading and releases its ZooKeeper session. Idempotent; never throws. */
    @Override
    void close();
}
