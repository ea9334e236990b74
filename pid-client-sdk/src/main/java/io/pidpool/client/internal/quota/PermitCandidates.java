package io.pidpool.client.internal.quota;

import io.pidpool.core.quota.QuotaMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Which held PIDs an acquire tries, in which order: every held PID the {@link QuotaNearCache} does not
 * <em>clearly</em> rule out (it knows fewer than {@code n} commands are left), each with its hint
 * (commands left as last observed, or {@code -1}: unknown), ordered by the {@link PermitPolicy} and
 * cut to {@code maxAttempts}. The decision itself is always the deduct script's.
 *
 * <p>Thread-safe if the policy is (the shipped ones are).
 */
final class PermitCandidates {
    private final HeldPids held;
    private final QuotaNearCache nearCache;
    private final PermitPolicy policy;
    private final int maxAttempts;

    PermitCandidates(HeldPids held, QuotaNearCache nearCache, PermitPolicy policy, int maxAttempts) {
        this.held = held;
        this.nearCache = nearCache;
        this.policy = policy;
        this.maxAttempts = maxAttempts;
    }

    /** The ordered, not-clearly-exhausted held PIDs to try for {@code n} commands, at most {@code maxAttempts}. */
    List<PermitPolicy.Candidate> order(int n, QuotaMonth month) {
        Set<String> pids = held.heldPids();
        if (pids.isEmpty()) {
            return List.of();
        }
        List<PermitPolicy.Candidate> candidates = new ArrayList<>(pids.size());
        for (String pid : pids) {
            OptionalLong left = nearCache.remaining(pid, month);
            if (left.isEmpty()) {
                candidates.add(new PermitPolicy.Candidate(pid, -1));
            } else if (left.getAsLong() >= n) {
                candidates.add(new PermitPolicy.Candidate(pid, left.getAsLong()));
            }
        }
        if (candidates.isEmpty()) {
            return candidates;
        }
        List<PermitPolicy.Candidate> ordered = policy.order(candidates, n);
        return ordered.size() > maxAttempts ? ordered.subList(0, maxAttempts) : ordered;
    }

    int maxAttempts() {
        return maxAttempts;
    }
}
