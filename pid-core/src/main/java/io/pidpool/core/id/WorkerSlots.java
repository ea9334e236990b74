package io.pidpool.core.id;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.OptionalInt;
import java.util.random.RandomGenerator;

/**
 * Picks free worker-id slots 0..31 . Pure: the registry reads which slots are taken
 * (the children of {@code /worker-ids}), asks for {@link #candidates} and tries to create the nodes
 * in that order until one create succeeds; losing a create race just moves on to the next candidate.
 *
 * <p><b>Policy.</b> The preferred slot (the one this process held before a reconnect) comes first
 * when it is free, so a process that got its session back keeps its worker id. The other free slots
 * follow in <em>random</em> order, not lowest-first: when many processes start together, lowest-first
 * would send them all racing for slot 0, then slot 1, and so on, while random order spreads them.
 * The randomness is injected, so tests can fix it.
 *
 * <p>Entries of {@code taken} outside 0..31 (a stray node under {@code /worker-ids}) are ignored: they
 * neither free nor take a slot. Thread-safe (stateless); the {@link RandomGenerator} passed in must be
 * safe for the calling thread.
 */
public final class WorkerSlots {
    /** Slots 0..31: the 5-bit worker id of {@link SnowflakeIds}. */
    public static final int COUNT = SnowflakeIds.MAX_WORKER_ID + 1;

    private WorkerSlots() {}

    /**
     * The free slots in the order to try them: {@code preferred} first if it is free, then the other
     * free slots in random order. Empty when every slot is taken.
     */
    public static List<Integer> candidates(Collection<Integer> taken, OptionalInt preferred, RandomGenerator random) {
        requireNonNull(taken, "taken");
        requireNonNull(preferred, "preferred");
        requireNonNull(random, "random");
        preferred.ifPresent(p -> requireArgument(
                p >= 0 && p < COUNT, "workerId", "preferred workerId must be within 0..%d, was %d", COUNT - 1, p));
        boolean[] busy = new boolean[COUNT];
        for (Integer slot : taken) {
            if (slot != null && slot >= 0 && slot < COUNT) {
                busy[slot] = true;
            }
        }
        List<Integer> free = new ArrayList<>(COUNT);
        for (int slot = 0; slot < COUNT; slot++) {
            if (!busy[slot] && !(preferred.isPresent() && preferred.getAsInt() == slot)) {
                free.add(slot);
            }
        }
        // Fisher-Yates with the injected generator
        for (int i = free.size() - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            Integer t = free.get(i);
            free.set(i, free.get(j));
            free.set(j, t);
        }
        if (preferred.isPresent() && !busy[preferred.getAsInt()]) {
            free.add(0, preferred.getAsInt());
        }
        return List.copyOf(free);
    }

    /**
     * The first of {@link #candidates}.
     *
     * @throws WorkerSlotsExhaustedException when every slot is taken
     */
    public static int pick(Collection<Integer> taken, OptionalInt preferred, RandomGenerator random) {
        List<Integer> candidates = candidates(taken, preferred, random);
        if (candidates.isEmpty()) {
            throw new WorkerSlotsExhaustedException(null);
        }
        return candidates.get(0);
    }

    /**
     * Parses a node name under {@code /worker-ids} into a slot, or empty when it is not a slot
     * (not a plain decimal 0..31, e.g. {@code "07"}, {@code "x"}, {@code "32"}).
     */
    public static OptionalInt parse(String nodeName) {
        if (nodeName == null || nodeName.isEmpty() || nodeName.length() > 2) {
            return OptionalInt.empty();
        }
        for (int i = 0; i < nodeName.length(); i++) {
            if (nodeName.charAt(i) < '0' || nodeName.charAt(i) > '9') {
                return OptionalInt.empty();
            }
        }
        if (nodeName.length() == 2 && nodeName.charAt(0) == '0') {
            return OptionalInt.empty();
        }
        int slot = Integer.parseInt(nodeName);
        return slot < COUNT ? OptionalInt.of(slot) : OptionalInt.empty();
    }
}
