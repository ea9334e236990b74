package io.pidpool.client.internal.ids;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.model.Names;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Who holds a worker-id slot: the data of the EPHEMERAL node {@code /worker-ids/<n>}, written once
 * by its creator. It identifies the holder for operators and lets a registry recognise its own node
 * ({@code owner} and {@code sessionId}); the node's {@code ephemeralOwner} is the authoritative
 * session.
 *
 * @param owner the registry's owner token ({@link io.pidpool.core.port.WorkerIdRegistry#owner()})
 * @param host where the holder runs, for operators (line breaks are replaced by spaces)
 * @param sessionId the ZooKeeper session that created the node
 * @param acquiredAtMillis the holder's wall clock when it took the slot
 */
public record SlotHolder(String owner, String host, long sessionId, long acquiredAtMillis) {
    private static final String KIND = "slotHolder";

    public SlotHolder {
        Names.requireToken(owner, "owner");
        requireArgument(host != null, "host", "host is required");
        host = host.replaceAll("[\\r\\n]+", " ").strip();
    }

    public Instant acquiredAt() {
        return Instant.ofEpochMilli(acquiredAtMillis);
    }

    public byte[] encode() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("owner", owner);
        fields.put("host", host);
        fields.put("session", NodeText.session(sessionId));
        fields.put("acquiredAt", Long.toString(acquiredAtMillis));
        return NodeText.encode(fields);
    }

    /** Reads node data back; {@code INVALID_ARGUMENT} (field {@code slotHolder}) if malformed. */
    public static SlotHolder decode(byte[] data) {
        Map<String, String> fields = NodeText.decode(data, KIND);
        return new SlotHolder(
                NodeText.required(fields, "owner", KIND),
                NodeText.required(fields, "host", KIND),
                NodeText.session(fields, KIND),
                NodeText.number(fields, "acquiredAt", KIND));
    }
}
