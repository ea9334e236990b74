package io.pidpool.core.protocol;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.time.Duration;

/**
 * The data of an instance's EPHEMERAL node {@code /modules/<module>/<instance>}. The SDK creates it
 * with an empty {@code pidsPath}; the leader creates {@code <instance>-pids} and writes its path
 * here (a versioned write, keeping the SDK's fields), which tells the SDK where to watch.
 *
 * <p>Wire format: version 1 = pidsPath, weight, host; version 2 = version 1 + the callback deadline
 * in milliseconds; version 3 = version 2 + the previous instance. A node is written in the lowest
 * version that holds its fields, so a first registration reads as before everywhere; only a client
 * that comes back after its session was lost writes version 3 (a leader must know it: upgrade the
 * servers before the SDKs).
 *
 * @param weight the instance's share relative to its peers (1 = normal)
 * @param host where the instance runs, for operators
 * @param callbackDeadlineMillis the longest an {@code onAssigned}/{@code onUpdated} of this instance
 *     may run before the SDK abandons it (the leader adds it to this instance's grace period); {@code
 *     0} = not reported (an SDK that enforces no deadline)
 * @param previousInstance the instance id this process registered under before its session was lost
 *     (the leader gives it that instance's slot back, docs/design.md §6.2); empty: none
 */
public record InstanceNode(
        String pidsPath, int weight, String host, long callbackDeadlineMillis, String previousInstance) {
    private static final int MAGIC = 'I';
    private static final int VERSION = 1;
    private static final int VERSION_WITH_DEADLINE = 2;
    private static final int VERSION_WITH_PREVIOUS = 3;

    /**
     * The SDK's default callback deadline, and what the leader assumes for an instance whose
     * deadline it cannot read (an SDK that reports none, or a pids node created before leaders
     * recorded it).
     */
    public static final Duration DEFAULT_CALLBACK_DEADLINE = Duration.ofSeconds(5);
    /** Bounds of a reported deadline: it lengthens the instance's grace period, so it must stay sane. */
    public static final Duration MIN_CALLBACK_DEADLINE = Duration.ofMillis(100);

    public static final Duration MAX_CALLBACK_DEADLINE = Duration.ofMinutes(5);

    public InstanceNode {
        pidsPath = pidsPath == null ? "" : pidsPath;
        host = host == null ? "" : host;
        previousInstance = previousInstance == null ? "" : previousInstance;
        if (!previousInstance.isEmpty()) {
            io.pidpool.core.model.InstanceId.of(previousInstance); // a valid instance id, or INVALID_ARGUMENT
        }
        requireArgument(weight >= 1 && weight <= 1000, "weight", "weight must be within 1..1000, was %d", weight);
        requireArgument(
                callbackDeadlineMillis == 0
                        || (callbackDeadlineMillis >= MIN_CALLBACK_DEADLINE.toMillis()
                                && callbackDeadlineMillis <= MAX_CALLBACK_DEADLINE.toMillis()),
                "callbackDeadline",
                "callbackDeadline must be 0 (not reported) or within %d..%d ms, was %d",
                MIN_CALLBACK_DEADLINE.toMillis(),
                MAX_CALLBACK_DEADLINE.toMillis(),
                callbackDeadlineMillis);
    }

    /** A node without a previous instance. */
    public InstanceNode(String pidsPath, int weight, String host, long callbackDeadlineMillis) {
        this(pidsPath, weight, host, callbackDeadlineMillis, "");
    }

    /** A node without a reported callback deadline (version 1). */
    public InstanceNode(String pidsPath, int weight, String host) {
        this(pidsPath, weight, host, 0);
    }

    public static InstanceNode registering(int weight, String host) {
        return new InstanceNode("", weight, host, 0);
    }

    /** What the SDK registers: its weight, host and the callback deadline it enforces. */
    public static InstanceNode registering(int weight, String host, Duration callbackDeadline) {
        return new InstanceNode("", weight, host, callbackDeadline.toMillis());
    }

    /** This node naming the instance the same process registered as before; {@code null}: none. */
    public InstanceNode withPreviousInstance(String previous) {
        return new InstanceNode(pidsPath, weight, host, callbackDeadlineMillis, previous);
    }

    public boolean hasPreviousInstance() {
        return !previousInstance.isEmpty();
    }

    public boolean hasPidsPath() {
        return !pidsPath.isEmpty();
    }

    public boolean reportsCallbackDeadline() {
        return callbackDeadlineMillis > 0;
    }

    public InstanceNode withPidsPath(String path) {
        return new InstanceNode(path, weight, host, callbackDeadlineMillis, previousInstance);
    }

    public byte[] encode() {
        int version = hasPreviousInstance()
                ? VERSION_WITH_PREVIOUS
                : reportsCallbackDeadline() ? VERSION_WITH_DEADLINE : VERSION;
        return WireFormat.encode(MAGIC, version, out -> {
            WireFormat.writeString(out, pidsPath);
            out.writeInt(weight);
            WireFormat.writeString(out, host);
            if (version >= VERSION_WITH_DEADLINE) {
                out.writeLong(callbackDeadlineMillis);
            }
            if (version >= VERSION_WITH_PREVIOUS) {
                WireFormat.writeString(out, previousInstance);
            }
        });
    }

    public static InstanceNode decode(byte[] data) {
        return WireFormat.decode(
                data,
                MAGIC,
                VERSION,
                VERSION_WITH_PREVIOUS,
                "instanceNode",
                (in, version) -> new InstanceNode(
                        WireFormat.readString(in, "instanceNode.pidsPath"),
                        in.readInt(),
                        WireFormat.readString(in, "instanceNode.host"),
                        version >= VERSION_WITH_DEADLINE ? in.readLong() : 0,
                        version >= VERSION_WITH_PREVIOUS
                                ? WireFormat.readString(in, "instanceNode.previousInstance")
                                : ""));
    }
}
