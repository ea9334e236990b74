package io.pidpool.core.protocol;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The data of a PID node {@code /modules/<module>/<instance>-pids/<pid>}: the leader's instruction
 * (state, the epoch that wrote it, the ZooKeeper session of the instance it is meant for, and the
 * account with its sealed secret) or the SDK's answer (the same with an -ED state, or an error).
 *
 * <p>The SDK acts only on a node whose {@code ownerSessionId} is its own session and whose epoch is
 * not older than the newest it has seen, and answers with a versioned {@code setData}, so an answer
 * can never overwrite an instruction it did not read.
 *
 * <p>Format versions: 1 without a report; 2 = 1 plus the holder's {@link HealthReport}. A node without
 * a report is always written as version 1, so readers that know only version 1 read every node the
 * leader writes; only a holder's report needs version 2.
 *
 * @param error why the SDK could not apply the instruction (e.g. {@code onAssigned} threw); empty if none
 * @param report the holder's report about the account (login failure or conflict); {@code null} if none
 */
public record PidNode(
        String pidId,
        PidState state,
        Epoch epoch,
        long ownerSessionId,
        AccountPayload account,
        String error,
        HealthReport report) {

    private static final int MAGIC = 'P';
    private static final int VERSION = 1;
    private static final int VERSION_WITH_REPORT = 2;

    /** The account as the SDK needs it: everything but the secret in clear, the secret sealed. */
    public record AccountPayload(
            long monthlyQuota, long overageAllowance, SealedSecret secret, Map<String, String> attributes) {
        public AccountPayload {
            requireArgument(monthlyQuota >= 0, "monthlyQuota", "monthlyQuota must be >= 0");
            requireArgument(overageAllowance >= 0, "overageAllowance", "overageAllowance must be >= 0");
            requireNonNull(secret, "secret");
            attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
        }
    }

    public PidNode {
        io.pidpool.core.model.Names.requirePidId(pidId, "pid");
        requireNonNull(state, "state");
        requireNonNull(epoch, "epoch");
        requireNonNull(account, "account");
        error = error == null ? "" : error;
    }

    /** A node without a report. */
    public PidNode(
            String pidId, PidState state, Epoch epoch, long ownerSessionId, AccountPayload account, String error) {
        this(pidId, state, epoch, ownerSessionId, account, error, null);
    }

    public static PidNode instruction(
            String pidId, PidState state, Epoch epoch, long ownerSessionId, AccountPayload account) {
        if (!state.isInstruction()) { // no varargs array per call when it holds (one per PID handed out)
            requireArgument(false, "state", "%s is not an instruction", state);
        }
        return new PidNode(pidId, state, epoch, ownerSessionId, account, "");
    }

    /** The SDK's answer: the -ED state of this instruction, everything else kept. */
    public PidNode acknowledged() {
        return new PidNode(pidId, state.ack(), epoch, ownerSessionId, account, "");
    }

    /** The SDK's report that it could not apply this instruction; the state stays as it was. */
    public PidNode failed(String reason) {
        return new PidNode(pidId, state, epoch, ownerSessionId, account, reason == null ? "failed" : reason, report);
    }

    /** The same node carrying the holder's report ({@code null}: without one). */
    public PidNode withReport(HealthReport value) {
        return new PidNode(pidId, state, epoch, ownerSessionId, account, error, value);
    }

    public boolean hasError() {
        return !error.isEmpty();
    }

    public boolean hasReport() {
        return report != null;
    }

    /**
     * The node's data: the same bytes as writing each field with {@link DataOutputStream} (magic,
     * version, then the fields; strings as length + UTF-8, attributes sorted by key), but sized
     * exactly and written once: the leader encodes one node per PID it hands out.
     */
    public byte[] encode() {
        byte[] pid = utf8(pidId);
        byte[] keyId = utf8(account.secret().keyId());
        byte[] sealed = account.secret().sealed();
        Map<String, String> attributes = account.attributes();
        byte[][] attributeBytes = new byte[attributes.size() * 2][];
        int size = 2 + 4 + pid.length + 1 + 8 * 4 + 4 + keyId.length + 4 + sealed.length + 4;
        int i = 0;
        for (var e : (attributes.size() > 1 ? new TreeMap<>(attributes) : attributes).entrySet()) {
            attributeBytes[i] = utf8(e.getKey());
            attributeBytes[i + 1] = utf8(e.getValue());
            size += 8 + attributeBytes[i].length + attributeBytes[i + 1].length;
            i += 2;
        }
        byte[] errorBytes = utf8(error);
        size += 4 + errorBytes.length;
        byte[] detail = report == null ? null : utf8(report.detail());
        if (detail != null) {
            size += 1 + 4 + detail.length;
        }
        ByteBuffer out = ByteBuffer.allocate(size); // big-endian, as DataOutputStream
        out.put((byte) MAGIC);
        out.put((byte) (report == null ? VERSION : VERSION_WITH_REPORT));
        putBytes(out, pid);
        out.put((byte) state.ordinal());
        out.putLong(epoch.value());
        out.putLong(ownerSessionId);
        out.putLong(account.monthlyQuota());
        out.putLong(account.overageAllowance());
        putBytes(out, keyId);
        putBytes(out, sealed);
        out.putInt(attributes.size());
        for (byte[] bytes : attributeBytes) {
            putBytes(out, bytes);
        }
        putBytes(out, errorBytes);
        if (detail != null) {
            out.put((byte) report.kind().ordinal());
            putBytes(out, detail);
        }
        return out.array();
    }

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static void putBytes(ByteBuffer out, byte[] value) {
        out.putInt(value.length);
        out.put(value);
    }

    /** Decodes node data; anything malformed is an INVALID_ARGUMENT about field {@code pidNode}. */
    public static PidNode decode(byte[] data) {
        return WireFormat.decode(data, MAGIC, VERSION, VERSION_WITH_REPORT, "pidNode", (in, version) -> {
            String pidId = WireFormat.readString(in, "pidNode.pid");
            int ordinal = in.readUnsignedByte();
            if (ordinal >= PidState.values().length) {
                throw PidPoolException.invalid("pidNode", "pidNode has unknown state %d", ordinal);
            }
            PidState state = PidState.values()[ordinal];
            Epoch epoch = new Epoch(in.readLong());
            long owner = in.readLong();
            long quota = in.readLong();
            long allowance = in.readLong();
            String keyId = WireFormat.readString(in, "pidNode.keyId");
            byte[] sealed = WireFormat.readBytes(in, "pidNode.secret", WireFormat.MAX_BYTES);
            Map<String, String> attributes = readAttributes(in);
            String error = WireFormat.readString(in, "pidNode.error");
            HealthReport report = null;
            if (version >= VERSION_WITH_REPORT) {
                int kind = in.readUnsignedByte();
                if (kind >= HealthReport.Kind.values().length) {
                    throw PidPoolException.invalid("pidNode", "pidNode has unknown report kind %d", kind);
                }
                String detail = WireFormat.readString(in, "pidNode.report");
                requireArgument(
                        detail.length() <= HealthReport.MAX_DETAIL,
                        "pidNode",
                        "pidNode report detail is longer than %d",
                        HealthReport.MAX_DETAIL);
                report = new HealthReport(HealthReport.Kind.values()[kind], detail);
            }
            return new PidNode(
                    pidId,
                    state,
                    epoch,
                    owner,
                    new AccountPayload(quota, allowance, new SealedSecret(keyId, sealed), attributes),
                    error,
                    report);
        });
    }

    private static Map<String, String> readAttributes(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > WireFormat.MAX_ENTRIES) {
            throw PidPoolException.invalid("pidNode", "pidNode has an impossible attribute count %d", n);
        }
        var map = new LinkedHashMap<String, String>();
        for (int i = 0; i < n; i++) {
            map.put(WireFormat.readString(in, "pidNode.attribute"), WireFormat.readString(in, "pidNode.attribute"));
        }
        return map;
    }
}
