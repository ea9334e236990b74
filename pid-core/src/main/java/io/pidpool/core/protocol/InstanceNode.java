package io.pidpool.core.protocol;

import static io.pidpool.core.error.Preconditions.requireArgument;

/**
 * The data of an instance's EPHEMERAL node {@code /modules/<module>/<instance>}. The SDK creates it
 * with an empty {@code pidsPath}; the leader creates {@code <instance>-pids} and writes its path
 * here (a versioned write, keeping the SDK's fields), which tells the SDK where to watch.
 *
 * @param weight the instance's share relative to its peers (1 = normal)
 * @param host where the instance runs, for operators
 */
public record InstanceNode(String pidsPath, int weight, String host) {
    private static final int MAGIC = 'I';
    private static final int VERSION = 1;

    public InstanceNode {
        pidsPath = pidsPath == null ? "" : pidsPath;
        host = host == null ? "" : host;
        requireArgument(weight >= 1 && weight <= 1000, "weight", "weight must be within 1..1000, was %d", weight);
    }

    public static InstanceNode registering(int weight, String host) {
        return new InstanceNode("", weight, host);
    }

    public boolean hasPidsPath() {
        return !pidsPath.isEmpty();
    }

    public InstanceNode withPidsPath(String path) {
        return new InstanceNode(path, weight, host);
    }

    public byte[] encode() {
        return WireFormat.encode(MAGIC, VERSION, out -> {
            WireFormat.writeString(out, pidsPath);
            out.writeInt(weight);
            WireFormat.writeString(out, host);
        });
    }

    public static InstanceNode decode(byte[] data) {
        return WireFormat.decode(
                data,
                MAGIC,
                VERSION,
                "instanceNode",
                in -> new InstanceNode(
                        WireFormat.readString(in, "instanceNode.pidsPath"),
                        in.readInt(),
                        WireFormat.readString(in, "instanceNode.host")));
    }
}
