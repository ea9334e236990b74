package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.InstanceId;

/**
 * One registration of one instance: the name of its ephemeral node plus the ZooKeeper session that
 * created it. An instance that restarts under the same name gets a new session and is, for the
 * planner, a different instance: PID nodes stamped with the old session belong to the old one.
 */
public record InstanceRef(InstanceId id, long sessionId) implements Comparable<InstanceRef> {
    public InstanceRef {
        requireNonNull(id, "instance");
    }

    public static InstanceRef of(String id, long sessionId) {
        return new InstanceRef(InstanceId.of(id), sessionId);
    }

    @Override
    public int compareTo(InstanceRef other) {
        int byId = id.compareTo(other.id);
        return byId != 0 ? byId : Long.compare(sessionId, other.sessionId);
    }

    @Override
    public String toString() {
        return id + "@" + Long.toHexString(sessionId);
    }
}
