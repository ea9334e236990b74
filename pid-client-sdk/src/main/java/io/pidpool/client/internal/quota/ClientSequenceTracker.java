package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The dedup-by-sequence for the usage event log, on the consumer side: per source (shard,
 * incarnation, client) it keeps the highest number up to which everything arrived, the highest number
 * seen, and the ranges in between that are missing.
 *
 * <ul>
 *   <li>A number at or below the contiguous mark, or inside the seen range but not missing, is a
 *       {@link Verdict#DUPLICATE}: store nothing.
 *   <li>A number above the highest seen is {@link Verdict#NEW}; any numbers it skipped become a
 *       {@link Gap}, to be fetched again from Redis ({@link UsageEventLog#findBySequence}).
 *   <li>A missing number that arrives later fills its gap and is {@link Verdict#NEW}.
 * </ul>
 *
 * A consumer persists {@link #contiguousUpTo} with its data and {@link #restore}s it after a restart.
 * A new incarnation (Redis lost its counters) is a new source whose numbers start at 1 again; it
 * deserves an alert, since events of the lost incarnation may be lost with it.
 *
 * <p><b>Concurrency.</b> Not thread-safe: one consumer thread per shard owns it.
 */
public final class ClientSequenceTracker {
    /** Who numbered an event. */
    public record Source(int shard, String incarnation, String clientId) {
        public static Source of(UsageEvent e) {
            return new Source(e.shard(), e.incarnation(), e.clientId());
        }
    }

    /** Numbers {@code fromSeq..toSeq} of {@code source} have not arrived. */
    public record Gap(Source source, long fromSeq, long toSeq) {}

    public enum Verdict {
        NEW,
        DUPLICATE
    }

    private static final class State {
        long contiguous;
        long max;
        /** from -> to, disjoint, all within (contiguous, max) */
        final TreeMap<Long, Long> missing = new TreeMap<>();
    }

    private final Map<Source, State> states = new HashMap<>();

    /** Sets {@code source} as complete up to {@code contiguousUpTo} (from the consumer's own storage). */
    public void restore(Source source, long contiguousUpTo) {
        requireNonNull(source, "source");
        requireArgument(contiguousUpTo >= 0, "contiguousUpTo", "must be >= 0, was %d", contiguousUpTo);
        State s = new State();
        s.contiguous = contiguousUpTo;
        s.max = contiguousUpTo;
        states.put(source, s);
    }

    public Verdict accept(UsageEvent event) {
        return accept(Source.of(requireNonNull(event, "event")), event.sequence());
    }

    public Verdict accept(Source source, long seq) {
        requireNonNull(source, "source");
        requireArgument(seq >= 1, "sequence", "sequence numbers start at 1, was %d", seq);
        State s = states.computeIfAbsent(source, k -> new State());
        if (seq <= s.contiguous) {
            return Verdict.DUPLICATE;
        }
        if (seq > s.max) {
            if (seq > s.max + 1) {
                s.missing.put(s.max + 1, seq - 1);
            }
            s.max = seq;
        } else {
            Map.Entry<Long, Long> range = s.missing.floorEntry(seq);
            if (range == null || range.getValue() < seq) {
                return Verdict.DUPLICATE;
            }
            s.missing.remove(range.getKey());
            if (range.getKey() < seq) {
                s.missing.put(range.getKey(), seq - 1);
            }
            if (seq < range.getValue()) {
                s.missing.put(seq + 1, range.getValue());
            }
        }
        s.contiguous = s.missing.isEmpty() ? s.max : s.missing.firstKey() - 1;
        return Verdict.NEW;
    }

    /**
     * Declares that {@code source} has used every number up to {@code lastUsed} (from {@link
     * UsageEventLog#heads}): numbers beyond the highest seen become a gap. This finds a lost
     * <em>last</em> event, which no later number would reveal.
     */
    public void expectUpTo(Source source, long lastUsed) {
        requireNonNull(source, "source");
        State s = states.computeIfAbsent(source, k -> new State());
        if (lastUsed > s.max) {
            s.missing.put(s.max + 1, lastUsed);
            s.max = lastUsed;
        }
    }

    /** Applies {@link #expectUpTo} for every client of a shard's heads. */
    public void expectUpTo(UsageEventLog.Heads heads) {
        heads.lastByClient()
                .forEach((client, last) -> expectUpTo(new Source(heads.shard(), heads.incarnation(), client), last));
    }

    /** Everything of {@code source} up to this number has arrived (0 if nothing). */
    public long contiguousUpTo(Source source) {
        State s = states.get(source);
        return s == null ? 0 : s.contiguous;
    }

    /** The missing ranges of every source, lowest first within a source. */
    public List<Gap> gaps() {
        List<Gap> gaps = new ArrayList<>();
        states.forEach((source, s) -> s.missing.forEach((from, to) -> gaps.add(new Gap(source, from, to))));
        return gaps;
    }
}
