package io.pidpool.client.internal.quota;

import io.pidpool.core.quota.QuotaMonth;
import java.time.Instant;

/**
 * One change of the quota ledger as the shard's stream records it: appended by the same script that
 * made the change, so it exists if and only if the change happened.
 *
 * @param offset the stream entry id ({@code <ms>-<n>}), the position to read on from; the deductions of
 *     one batch script run in a shard share one entry, so several events may have the same offset
 * @param shard the shard whose stream holds it
 * @param kind deduction, refund or reset
 * @param deductionId the deduction (empty for a reset)
 * @param refundId the refund (empty unless {@link Kind#REFUND})
 * @param amount commands deducted or refunded (0 for a reset)
 * @param usedAfter the PID's usage in {@code month} right after the change
 * @param limit the PID's hard limit at the time
 * @param clientId the ledger client that made the change
 * @param sequence that client's sequence number in this shard: 1, 2, 3, ... without gaps
 * @param incarnation the life of the shard's sequence counters (changes only if Redis lost them)
 */
public record UsageEvent(
        String offset,
        int shard,
        Kind kind,
        String pid,
        QuotaMonth month,
        String deductionId,
        String refundId,
        long amount,
        long usedAfter,
        long limit,
        String clientId,
        long sequence,
        String incarnation) {

    /** What changed. */
    public enum Kind {
        DEDUCTION("D"),
        REFUND("R"),
        RESET("X");

        final String code;

        Kind(String code) {
            this.code = code;
        }

        static Kind of(String code) {
            for (Kind k : values()) {
                if (k.code.equals(code)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown usage event kind '" + code + "'");
        }
    }

    /**
     * A key unique to the change within the ledger's life: the deduction id scoped to PID and month,
     * the refund id scoped to its deduction (docs/quota.md §5a), or the reset's client sequence.
     */
    public String changeKey() {
        return switch (kind) {
            case DEDUCTION -> "D|" + pid + "|" + month + "|" + deductionId;
            case REFUND -> "R|" + pid + "|" + month + "|" + deductionId + "|" + refundId;
            case RESET -> "X|" + pid + "|" + month + "|" + incarnation + "|" + clientId + "|" + sequence;
        };
    }

    /** When Redis appended it (the stream id's milliseconds). */
    public Instant appendedAt() {
        return Instant.ofEpochMilli(Long.parseLong(offset.substring(0, offset.indexOf('-'))));
    }
}
