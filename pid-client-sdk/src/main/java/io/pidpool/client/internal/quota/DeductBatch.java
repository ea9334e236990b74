package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.DeductResult;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Deductions sent by {@link RedissonQuotaLedger#sendDeductAll} ({@link BatchDeductScript}); decode
 * once the replies are in. Safe to hand between threads: {@link #replies()} completes on a Redisson
 * thread, {@link #decode()} may run on any.
 */
public final class DeductBatch {
    private final List<DeductRequest> requests;
    private final List<List<Integer>> groups;
    private final boolean combined;
    private final CompletableFuture<List<Object>> replies;
    private final ScriptReplies answers;

    DeductBatch(
            List<DeductRequest> requests,
            List<List<Integer>> groups,
            boolean combined,
            CompletableFuture<List<Object>> replies,
            ScriptReplies answers) {
        this.requests = requests;
        this.groups = groups;
        this.combined = combined;
        this.replies = replies;
        this.answers = answers;
    }

    public List<DeductRequest> requests() {
        return requests;
    }

    /** Completes on a Redisson thread when Redis answered (or failed: then {@link #decode()} throws). */
    public CompletableFuture<List<Object>> replies() {
        return replies;
    }

    /**
     * The answers in the order asked; feeds the near cache. Call after {@link #replies()} completed.
     *
     * @throws PidPoolException {@code UNAVAILABLE} when Redis did not answer (the deductions may or
     *     may not have happened; sending the same requests again is safe)
     */
    public List<DeductResult> decode() {
        List<Object> raw;
        try {
            raw = replies.getNow(null);
        } catch (CompletionException | CancellationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw cause instanceof RuntimeException re
                    ? QuotaScripts.translate("running the batch deduct script", re)
                    : QuotaScripts.unavailable("running the batch deduct script", cause);
        }
        requireState(raw != null, "the batch has no replies yet");
        DeductResult[] out = new DeductResult[requests.size()];
        int at = 0;
        int c = 0;
        for (List<Integer> idx : groups) {
            @SuppressWarnings("unchecked")
            List<Object> reply = (List<Object>) raw.get(combined ? 0 : c++);
            if (!combined) {
                at = 0;
            }
            for (int i : idx) {
                out[i] = answers.batchDeduct(requests.get(i), reply, at);
                at = ScriptReplies.nextBatchAnswer(reply, at);
            }
        }
        return List.of(out);
    }
}
