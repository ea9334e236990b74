package io.pidpool.client.internal.ids;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The data of the PERSISTENT node {@code /worker-id-marks/<n>}: the timestamp (epoch milliseconds, in
 * the id space: the issuing clock's reading) up to which holders of slot {@code n} may have issued
 * Snowflake ids, and which holder wrote it last. A new holder issues only ids after {@code
 * reservedUntilMillis}. It is written only by the slot's current holder, with a version check, so it
 * only moves when a holder says so.
 *
 * @param reservedUntilMillis no id of this slot has a later timestamp; {@code -1} for none yet
 * @param owner the owner token of the holder that wrote the mark ({@code none} before any)
 * @param sessionId that holder's ZooKeeper session ({@code 0} before any)
 */
public record SlotMark(long reservedUntilMillis, String owner, long sessionId) {
    private static final String KIND = "slotMark";

    /** The mark of a slot that has never been held. */
    public static final SlotMark NONE = new SlotMark(-1, "none", 0);

    public SlotMark {
        Names.requireToken(owner, "owner");
        if (reservedUntilMillis < -1) {
            throw PidPoolException.invalid(KIND, "reservedUntil must be >= -1, was %d", reservedUntilMillis);
        }
    }

    public byte[] encode() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("reservedUntil", Long.toString(reservedUntilMillis));
        fields.put("owner", owner);
        fields.put("session", NodeText.session(sessionId));
        return NodeText.encode(fields);
    }

    /** Reads node data back; {@code INVALID_ARGUMENT} (field {@code slotMark}) if malformed. */
    public static SlotMark decode(byte[] data) {
        Map<String, String> fields = NodeText.decode(data, KIND);
        return new SlotMark(
                NodeText.number(fields, "reservedUntil", KIND),
                NodeText.required(fields, "owner", KIND),
                NodeText.session(fields, KIND));
    }
}
