package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireNonNull;

/**
 * Which instance a PID is written to, in which node state, by which leader epoch, for which
 * ZooKeeper session of the instance. The SDK acts only on nodes whose {@code ownerSessionId} is its
 * own session and whose epoch is not older than one it has seen.
 */
public record Assignment(
        String pidId, ModuleKey module, InstanceId instance, PidState state, Epoch epoch, long ownerSessionId) {
    public Assignment {
        Names.requirePidId(pidId, "pid.id");
        requireNonNull(module, "module");
        requireNonNull(instance, "instance");
        requireNonNull(state, "state");
        requireNonNull(epoch, "epoch");
    }

    public Assignment withState(PidState next) {
        return new Assignment(pidId, module, instance, next.assertCanFollow(state), epoch, ownerSessionId);
    }
}
