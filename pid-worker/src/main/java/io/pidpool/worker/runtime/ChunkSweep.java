package io.pidpool.worker.runtime;

import io.pidpool.worker.task.TypedRanges;
import java.util.ArrayList;
import java.util.List;

/**
 * The fairness of a worker's fetches: its owned ranges packed into chunks of at most {@code
 * rangesPerQuery} ranges (one statement each), visited round-robin from where the last sweep
 * stopped. A chunk found empty is skipped for one poll interval, so a busy range cannot starve the
 * others and idle ranges cost one query per chunk per poll interval.
 *
 * <p>Not thread-safe: used from the pool's loop thread only.
 */
final class ChunkSweep {
    /** Ranges fetched with one statement; skipped until {@code skipUntil} (ticker nanos) once found empty. */
    static final class Chunk {
        final List<TypedRanges> selection;
        long skipUntil;

        Chunk(List<TypedRanges> selection, long skipUntil) {
            this.selection = selection;
            this.skipUntil = skipUntil;
        }
    }

    private final int rangesPerQuery;
    private List<Chunk> chunks = List.of();
    private int cursor;

    ChunkSweep(int rangesPerQuery) {
        this.rangesPerQuery = rangesPerQuery;
    }

    /** Packs newly owned ranges into chunks, due at once; the sweep starts again at the first. */
    void repack(List<TypedRanges> owned, long now) {
        List<Chunk> next = new ArrayList<>();
        List<TypedRanges> selection = new ArrayList<>();
        int size = 0;
        for (TypedRanges t : owned) {
            for (int i = 0; i < t.ranges().size(); ) {
                int take = Math.min(t.ranges().size() - i, rangesPerQuery - size);
                selection.add(TypedRanges.of(t.types(), t.ranges().subList(i, i + take)));
                size += take;
                i += take;
                if (size == rangesPerQuery) {
                    next.add(new Chunk(List.copyOf(selection), now));
                    selection.clear();
                    size = 0;
                }
            }
        }
        if (!selection.isEmpty()) {
            next.add(new Chunk(List.copyOf(selection), now));
        }
        chunks = List.copyOf(next);
        cursor = 0;
    }

    boolean isEmpty() {
        return chunks.isEmpty();
    }

    int size() {
        return chunks.size();
    }

    /** The next chunk in round-robin order (skipped or not: the caller checks {@link Chunk#skipUntil}). */
    Chunk next() {
        Chunk chunk = chunks.get(cursor);
        cursor = (cursor + 1) % chunks.size();
        return chunk;
    }

    /** Every chunk's selection, in chunk order. */
    List<TypedRanges> selections() {
        List<TypedRanges> all = new ArrayList<>();
        chunks.forEach(c -> all.addAll(c.selection));
        return all;
    }
}
