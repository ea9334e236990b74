package io.pidpool.client.internal.quota;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.DeductResult.AlreadyGranted;
import io.pidpool.core.quota.DeductResult.Granted;
import io.pidpool.core.quota.DeductResult.Rejected;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.QuotaUsage;
import io.pidpool.core.quota.RefundResult;
import io.pidpool.core.quota.RefundResult.RefundApplied;
import io.pidpool.core.quota.RefundResult.RefundDuplicate;
import io.pidpool.core.quota.RefundResult.RefundRejected;
import java.util.List;

/**
 * The answers of the ledger's scripts read back as results: the reply layouts of {@code deduct.lua},
 * {@code deduct_batch.lua}, {@code refund.lua} and {@code usage.lua} in one place. Every answer
 * carries the PID's usage, limit and epoch as Redis saw them, and each one read feeds the client's
 * {@link QuotaNearCache}. Thread-safe (the near cache is).
 */
final class ScriptReplies {
    private final QuotaNearCache nearCache;

    ScriptReplies(QuotaNearCache nearCache) {
        this.nearCache = nearCache;
    }

    /** One answer of deduct.lua (or a refusal of the batch script), starting at {@code at}. */
    DeductResult deduct(DeductRequest r, List<Object> reply, int at) {
        int code = num(reply, at);
        long used = lng(reply, at + 4);
        long limit = lng(reply, at + 5);
        long epoch = lng(reply, at + 6);
        nearCache.observe(r.pid(), r.month(), used, limit, epoch);
        return switch (code) {
            case 1 ->
                new Granted(r.pid(), r.month(), r.deductionId(), r.amount(), lng(reply, at + 2), lng(reply, at + 3));
            case 2 ->
                new AlreadyGranted(new Granted(
                        r.pid(),
                        r.month(),
                        r.deductionId(),
                        lng(reply, at + 1),
                        lng(reply, at + 2),
                        lng(reply, at + 3)));
            case 3 ->
                new Rejected(
                        r.pid(),
                        r.month(),
                        r.deductionId(),
                        r.amount(),
                        DeductResult.Reason.DEDUCTION_ID_CONFLICT,
                        used,
                        limit);
            case 4 ->
                new Rejected(
                        r.pid(),
                        r.month(),
                        r.deductionId(),
                        r.amount(),
                        DeductResult.Reason.QUOTA_EXHAUSTED,
                        used,
                        limit);
            default -> throw PidPoolException.illegalState("deduct script answered unknown code %d", code);
        };
    }

    /** One answer of the batch script: a grant is {@code {1, usedAfter, limit, epoch}}, the rest as deduct's. */
    DeductResult batchDeduct(DeductRequest r, List<Object> reply, int at) {
        if (num(reply, at) != 1) {
            return deduct(r, reply, at);
        }
        long used = lng(reply, at + 1);
        long limit = lng(reply, at + 2);
        nearCache.observe(r.pid(), r.month(), used, limit, lng(reply, at + 3));
        return new Granted(r.pid(), r.month(), r.deductionId(), r.amount(), used, limit);
    }

    /** Where the batch script's answer after the one at {@code at} starts. */
    static int nextBatchAnswer(List<Object> reply, int at) {
        return at + (num(reply, at) == 1 ? 4 : 8); // a grant is 4 fields long (deduct_batch.lua)
    }

    RefundResult refund(
            String pid, QuotaMonth month, String deductionId, String refundId, long amount, List<Object> reply) {
        int code = num(reply, 0);
        nearCache.observe(pid, month, lng(reply, 5), lng(reply, 6), lng(reply, 7));
        return switch (code) {
            case 1 ->
                new RefundApplied(
                        pid, month, deductionId, refundId, amount, lng(reply, 2), lng(reply, 3), lng(reply, 4));
            case 2 ->
                new RefundDuplicate(new RefundApplied(
                        pid, month, deductionId, refundId, lng(reply, 1), lng(reply, 2), lng(reply, 3), lng(reply, 4)));
            case 3 ->
                refundRejected(
                        pid, month, deductionId, refundId, amount, RefundResult.Reason.REFUND_ID_CONFLICT, reply);
            case 4 ->
                refundRejected(pid, month, deductionId, refundId, amount, RefundResult.Reason.UNKNOWN_DEDUCTION, reply);
            case 5 ->
                refundRejected(pid, month, deductionId, refundId, amount, RefundResult.Reason.EXCEEDS_DEDUCTION, reply);
            default -> throw PidPoolException.illegalState("refund script answered unknown code %d", code);
        };
    }

    private static RefundRejected refundRejected(
            String pid,
            QuotaMonth month,
            String deductionId,
            String refundId,
            long amount,
            RefundResult.Reason reason,
            List<Object> reply) {
        return new RefundRejected(pid, month, deductionId, refundId, amount, reason, lng(reply, 2), lng(reply, 3));
    }

    /** usage.lua's answer: {@code {used, limit, epoch}}. */
    QuotaUsage usage(String pid, QuotaMonth month, List<Object> reply) {
        long used = lng(reply, 0);
        long limit = lng(reply, 1);
        nearCache.observe(pid, month, used, limit, lng(reply, 2));
        return new QuotaUsage(pid, month, used, limit);
    }

    private static int num(List<Object> reply, int i) {
        return (int) lng(reply, i);
    }

    private static long lng(List<Object> reply, int i) {
        Object v = reply.get(i);
        if (v instanceof Long l) {
            return l;
        }
        if (v instanceof String s) {
            return Long.parseLong(s);
        }
        throw PidPoolException.illegalState("script answered %s at %d, expected a number", v, i);
    }
}
