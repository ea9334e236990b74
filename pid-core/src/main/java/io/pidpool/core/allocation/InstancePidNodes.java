package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.model.PidState;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * An instance's PID nodes as the planner keeps them: an immutable map over two arrays, in the order
 * of the map it was copied from. Copying needs no hashing (the source's keys are already distinct),
 * iterating touches two arrays instead of a chain of map entries, and a copy of a copy is the copy
 * itself. {@link #get} hashes only when asked (a lazily built index; the planner itself only
 * iterates).
 *
 * <p>Concurrency: immutable; the lazy index is published through a volatile field.
 */
final class InstancePidNodes extends AbstractMap<String, PidState> {
    /** Below this size {@link #get} scans instead of building an index. */
    private static final int SCAN_LIMIT = 8;

    private final String[] pids;
    private final PidState[] states;
    private volatile Map<String, Integer> index;
    private Set<Map.Entry<String, PidState>> entrySet;

    private InstancePidNodes(String[] pids, PidState[] states) {
        this.pids = pids;
        this.states = states;
    }

    /** An unmodifiable, order-preserving copy; rejects null PIDs and states ({@code field} names the input). */
    static Map<String, PidState> copyOf(Map<String, PidState> source, String field) {
        if (source == null || source.isEmpty()) {
            return Map.of();
        }
        if (source instanceof InstancePidNodes same) {
            return same;
        }
        int size = source.size();
        String[] pids = new String[size];
        PidState[] states = new PidState[size];
        int k = 0;
        for (Map.Entry<String, PidState> node : source.entrySet()) {
            requireArgument(
                    node.getKey() != null && node.getValue() != null, field, "%s holds a null PID or state", field);
            pids[k] = node.getKey();
            states[k++] = node.getValue();
        }
        requireArgument(k == size, field, "%s changed while it was copied", field);
        return new InstancePidNodes(pids, states);
    }

    @Override
    public int size() {
        return pids.length;
    }

    @Override
    public boolean containsKey(Object key) {
        return indexOf(key) >= 0;
    }

    @Override
    public PidState get(Object key) {
        int i = indexOf(key);
        return i < 0 ? null : states[i];
    }

    @Override
    public void forEach(BiConsumer<? super String, ? super PidState> action) {
        for (int i = 0; i < pids.length; i++) {
            action.accept(pids[i], states[i]);
        }
    }

    @Override
    public Set<Map.Entry<String, PidState>> entrySet() {
        Set<Map.Entry<String, PidState>> set = entrySet;
        if (set == null) {
            set = new AbstractSet<>() {
                @Override
                public int size() {
                    return pids.length;
                }

                @Override
                public Iterator<Map.Entry<String, PidState>> iterator() {
                    return new IndexIterator<>(pids.length, i -> new SimpleImmutableEntry<>(pids[i], states[i]));
                }
            };
            entrySet = set;
        }
        return set;
    }

    private int indexOf(Object key) {
        if (pids.length <= SCAN_LIMIT) {
            for (int i = 0; i < pids.length; i++) {
                if (pids[i].equals(key)) {
                    return i;
                }
            }
            return -1;
        }
        Map<String, Integer> byPid = index;
        if (byPid == null) {
            byPid = new HashMap<>(pids.length * 4 / 3 + 1);
            for (int i = 0; i < pids.length; i++) {
                byPid.put(pids[i], i);
            }
            index = byPid;
        }
        Integer i = byPid.get(key);
        return i == null ? -1 : i;
    }
}
