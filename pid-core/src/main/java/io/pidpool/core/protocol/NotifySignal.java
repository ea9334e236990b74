package io.pidpool.core.protocol;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import java.nio.charset.StandardCharsets;

/**
 * The data of {@code /notify}: {@code DEALING|<batchId>} written by a server that recorded a batch,
 * {@code DEALED|<batchId>} written by the leader when it has applied it. The
 * node only wakes the leader up: the database is the source of truth, and the leader also polls.
 */
public record NotifySignal(Phase phase, BatchId batch) {
    public enum Phase {
        DEALING,
        DEALED
    }

    public byte[] encode() {
        return (phase + "|" + batch).getBytes(StandardCharsets.UTF_8);
    }

    public static NotifySignal decode(byte[] data) {
        String text = data == null ? "" : new String(data, StandardCharsets.UTF_8);
        int bar = text.indexOf('|');
        try {
            return new NotifySignal(
                    Phase.valueOf(text.substring(0, bar)), new BatchId(Long.parseLong(text.substring(bar + 1))));
        } catch (RuntimeException e) {
            throw PidPoolException.invalid("notify", "notify data must be DEALING|<id> or DEALED|<id>, was '%s'", text);
        }
    }
}
