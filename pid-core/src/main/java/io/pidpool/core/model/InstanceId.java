package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

/**
 * One client server of a module: the name of its ephemeral node under
 * {@code /modules/<module>/}. The leader's per-instance node is this name plus {@link #PIDS_SUFFIX},
 * so an instance id may not itself end with that suffix.
 */
public record InstanceId(String value) implements Comparable<InstanceId> {
    public static final String PIDS_SUFFIX = "-pids";

    public InstanceId {
        Names.requireToken(value, "instance");
        requireArgument(
                !value.endsWith(PIDS_SUFFIX), "instance", "instance id may not end with %s: '%s'", PIDS_SUFFIX, value);
    }

    public static InstanceId of(String value) {
        return new InstanceId(value);
    }

    /** The node name of the leader-owned node that holds this instance's PIDs. */
    public String pidsNodeName() {
        return value + PIDS_SUFFIX;
    }

    @Override
    public int compareTo(InstanceId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
