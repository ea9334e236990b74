package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A module's desired PIDs as the planner keeps them: an immutable set over one array, in the order
 * of the set it was copied from. Copying needs no hashing (the source's elements are already
 * distinct) and a copy of a copy is the copy itself; {@link #contains} hashes only when asked (a
 * lazily built index; the planner itself only iterates).
 *
 * <p>Concurrency: immutable; the lazy index is published through a volatile field.
 */
final class PidSet extends AbstractSet<String> {
    private static final int SCAN_LIMIT = 8;

    private final String[] pids;
    private volatile Set<String> index;

    private PidSet(String[] pids) {
        this.pids = pids;
    }

    /** An unmodifiable, order-preserving copy; rejects null PIDs ({@code field} names the input). */
    static Set<String> copyOf(Set<String> source, String field) {
        if (source == null || source.isEmpty()) {
            return Set.of();
        }
        if (source instanceof PidSet same) {
            return same;
        }
        String[] pids = source.toArray(new String[0]);
        for (String pid : pids) {
            requireArgument(pid != null, field, "%s holds a null PID", field);
        }
        return new PidSet(pids);
    }

    /** An unmodifiable copy of PIDs already known to be distinct and non-null, in their order. */
    static Set<String> ofDistinct(Collection<String> distinct) {
        return distinct.isEmpty() ? Set.of() : new PidSet(distinct.toArray(new String[0]));
    }

    @Override
    public int size() {
        return pids.length;
    }

    @Override
    public boolean contains(Object o) {
        if (pids.length <= SCAN_LIMIT) {
            for (String pid : pids) {
                if (pid.equals(o)) {
                    return true;
                }
            }
            return false;
        }
        Set<String> byPid = index;
        if (byPid == null) {
            byPid = new HashSet<>(Arrays.asList(pids));
            index = byPid;
        }
        return byPid.contains(o);
    }

    @Override
    public void forEach(Consumer<? super String> action) {
        for (String pid : pids) {
            action.accept(pid);
        }
    }

    @Override
    public Object[] toArray() {
        return pids.clone();
    }

    @Override
    public Iterator<String> iterator() {
        return new IndexIterator<>(pids.length, i -> pids[i]);
    }
}
