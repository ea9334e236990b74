package io.pidpool.worker.ring;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.core.ring.SlotRange;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The live members of one worker group with the task types each runs, and one consistent-hash
 * ring per task type: the ring of type {@code t} is made of the members that run {@code t}, so a
 * task of type {@code t} is owned by the member of that ring that owns its slot, and a member that
 * lacks the handler never owns it. A type that no member runs has an empty ring: its tasks have no
 * owner and stay PENDING (docs/worker.md §3, "Rings per task type").
 *
 * <p>Every type ring is a {@link ConsistentHashRing} over the same points ({@code memberId} and
 * {@code vnodes}), restricted to the members of that type: two types run by the same members have
 * the same ring, and adding or removing a member moves ranges only in the rings of its types.
 *
 * <p>A member whose types contain {@link #ANY_TYPE} runs every type (rings set by hand, see {@link
 * StaticRingMembership}). A member with no types (a ring node written before nodes carried a
 * {@code types} line) runs none as far as this ring is concerned: it is in {@link #all()} but in
 * no type ring.
 *
 * <p>Immutable and thread-safe.
 */
public final class GroupRing {
    /** In a member's types: the member runs every task type. */
    public static final String ANY_TYPE = "*";

    private static final GroupRing EMPTY = new GroupRing(Map.of());

    /** What a member advertises: its virtual node count and the task types it runs. */
    public record Member(int virtualNodes, Set<String> types) {
        public Member {
            ConsistentHashRing.requireVirtualNodes(virtualNodes);
            types = Collections.unmodifiableSet(new TreeSet<>(requireNonNull(types, "types")));
        }

        boolean runs(String type) {
            return types.contains(type) || types.contains(ANY_TYPE);
        }
    }

    private final Map<String, Member> members;
    private final ConsistentHashRing all;
    /** Rings by their member set: types run by the same members share one ring. */
    private final Map<Set<String>, ConsistentHashRing> ringsByMembers = new HashMap<>();

    private final Map<String, ConsistentHashRing> byType = new HashMap<>();
    private final ConsistentHashRing anyTypeRing;

    private GroupRing(Map<String, Member> members) {
        this.members = Collections.unmodifiableMap(new TreeMap<>(members));
        Map<String, Integer> vnodes = new HashMap<>();
        members.forEach((id, m) -> vnodes.put(id, m.virtualNodes()));
        this.all = ConsistentHashRing.of(vnodes);
        Set<String> types = new TreeSet<>();
        this.members.values().forEach(m -> types.addAll(m.types()));
        types.remove(ANY_TYPE);
        for (String t : types) {
            byType.put(t, ringOfMembers(t));
        }
        this.anyTypeRing = ringOfMembers(ANY_TYPE);
    }

    /** The group without members. */
    public static GroupRing empty() {
        return EMPTY;
    }

    /** A ring of the given members; validates ids and virtual node counts. */
    public static GroupRing of(Map<String, Member> members) {
        requireNonNull(members, "members");
        return members.isEmpty() ? EMPTY : new GroupRing(members);
    }

    /** Every member of {@code ring} runs every task type: the ring decides alone (a ring set by hand). */
    public static GroupRing untyped(ConsistentHashRing ring) {
        Map<String, Member> members = new HashMap<>();
        ring.members().forEach((id, v) -> members.put(id, new Member(v, Set.of(ANY_TYPE))));
        return of(members);
    }

    /** The members and what each advertises, sorted by member id. */
    public Map<String, Member> members() {
        return members;
    }

    /** The ring of every live member, whatever it runs (membership, balance, who is alive). */
    public ConsistentHashRing all() {
        return all;
    }

    /** The ring that decides who runs tasks of {@code type}: the members that run it; empty if none does. */
    public ConsistentHashRing ringOf(String type) {
        ConsistentHashRing r = byType.get(type);
        return r != null ? r : anyTypeRing;
    }

    /** The member that runs the task of {@code type} in {@code slot}; empty when no member runs the type. */
    public Optional<String> ownerOf(String type, long slot) {
        return ringOf(type).ownerOf(slot);
    }

    /** Whether some live member runs {@code type}. */
    public boolean runs(String type) {
        return !ringOf(type).isEmpty();
    }

    /** The types some member advertises by name (without {@link #ANY_TYPE}), sorted. */
    public Set<String> types() {
        return Collections.unmodifiableSet(new TreeSet<>(byType.keySet()));
    }

    /**
     * The ranges {@code member} owns for each of {@code types} (the types it has handlers for), grouped
     * by ring: types whose rings have the same members share one entry. Types whose ring does not
     * contain {@code member} are absent. Keys are sorted type sets, in the order of their smallest type.
     */
    public Map<Set<String>, List<SlotRange>> rangesOf(String member, Set<String> types) {
        Map<Set<String>, Set<String>> typesByMembers = new LinkedHashMap<>();
        for (String t : new TreeSet<>(types)) {
            ConsistentHashRing r = ringOf(t);
            if (r.contains(member)) {
                typesByMembers
                        .computeIfAbsent(r.members().keySet(), k -> new TreeSet<>())
                        .add(t);
            }
        }
        Map<Set<String>, List<SlotRange>> out = new LinkedHashMap<>();
        typesByMembers.forEach((ids, ts) ->
                out.put(Collections.unmodifiableSet(ts), ringsByMembers.get(ids).rangesOf(member)));
        return Collections.unmodifiableMap(out);
    }

    /**
     * The member that reports group-wide facts such as tasks of types no member runs: the smallest id
     * among the members that run some type, so that one member of the group (as far as the views
     * agree) logs and exports them. Empty when no member runs anything.
     */
    public Optional<String> reporter() {
        return members.entrySet().stream()
                .filter(e -> !e.getValue().types().isEmpty())
                .map(Map.Entry::getKey)
                .findFirst();
    }

    private ConsistentHashRing ringOfMembers(String type) {
        Map<String, Integer> vnodes = new HashMap<>();
        members.forEach((id, m) -> {
            if (m.runs(type)) {
                vnodes.put(id, m.virtualNodes());
            }
        });
        if (vnodes.size() == members.size()) {
            ringsByMembers.putIfAbsent(members.keySet(), all);
            return all;
        }
        return ringsByMembers.computeIfAbsent(Set.copyOf(vnodes.keySet()), k -> ConsistentHashRing.of(vnodes));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GroupRing other && members.equals(other.members);
    }

    @Override
    public int hashCode() {
        return members.hashCode();
    }

    @Override
    public String toString() {
        return "GroupRing" + members;
    }
}
