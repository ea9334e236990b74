package io.pidpool.client.internal;

import io.pidpool.client.PidAccount;
import io.pidpool.core.protocol.PidNode;

/** What {@link PidTracker} asks the driver to do next for one PID. */
sealed interface Action {
    String pid();

    /** Open the secret of {@code view}'s account and call {@code onAssigned}. */
    record Assign(String pid, NodeView view) implements Action {}

    /** Open the secret of {@code view}'s account and call {@code onUpdated(before, after)}. */
    record Update(String pid, PidAccount before, NodeView view) implements Action {}

    /** Call {@code onRevoked(account)}; {@code why} is for the log. */
    record Revoke(String pid, PidAccount account, String why) implements Action {}

    /**
     * {@code setData(path, node)} with {@code withVersion(expectedVersion)}; {@code baseMzxid} names
     * the observation the write answers.
     */
    record Write(String pid, long generation, String path, PidNode node, int expectedVersion, long baseMzxid)
            implements Action {}
}
