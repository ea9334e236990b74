package io.pidpool.client.internal.quota;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Which held PID a permit is taken from: orders the candidates, best first. The issuer tries them in
 * that order (at most {@code maxAttempts} of them); Redis decides each attempt.
 *
 * <p>Implementations must be thread-safe and must not block or call Redis: they see only the near
 * cache's hints.
 */
@FunctionalInterface
public interface PermitPolicy {
    /**
     * A held PID that is not clearly exhausted.
     *
     * @param remainingHint commands left as this client last observed them, or {@code -1} when unknown
     */
    record Candidate(String pid, long remainingHint) {
        public boolean known() {
            return remainingHint >= 0;
        }
    }

    /** Orders {@code candidates} for a request of {@code n} commands; may drop some, never adds. */
    List<Candidate> order(List<Candidate> candidates, int n);

    /**
     * The default: most remaining quota first, so usage spreads evenly and no PID runs dry while
     * others idle. PIDs without a hint come first (one script answer gives them one). Ties are broken
     * round-robin, so concurrent callers with equal hints spread over the PIDs instead of all hitting
     * the first.
     */
    static PermitPolicy mostRemainingFirst() {
        AtomicInteger rotation = new AtomicInteger();
        Comparator<Candidate> byHint = Comparator.comparingLong(
                        (Candidate c) -> c.known() ? c.remainingHint() : Long.MAX_VALUE)
                .reversed();
        return (candidates, n) -> {
            int size = candidates.size();
            if (size <= 1) {
                return candidates;
            }
            int start = Math.floorMod(rotation.getAndIncrement(), size);
            List<Candidate> rotated = new ArrayList<>(size);
            rotated.addAll(candidates.subList(start, size));
            rotated.addAll(candidates.subList(0, start));
            rotated.sort(byHint); // stable: equal hints keep the rotated order
            return rotated;
        };
    }

    /** Least remaining first: drains one PID before touching the next (packs usage, e.g. to retire PIDs). */
    static PermitPolicy leastRemainingFirst() {
        Comparator<Candidate> byHint =
                Comparator.comparingLong((Candidate c) -> c.known() ? c.remainingHint() : Long.MAX_VALUE);
        return (candidates, n) -> {
            List<Candidate> sorted = new ArrayList<>(candidates);
            sorted.sort(byHint);
            return sorted;
        };
    }
}
