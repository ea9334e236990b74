package io.pidpool.core.ring;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * An immutable consistent-hash ring over the slot space {@code [0, 2^32)}.
 *
 * <p><b>Slot space.</b> A slot is an unsigned 32-bit number, {@code 0 <= slot < 2^32}; a key's slot
 * is {@link #slotOf(String)}, the unsigned MurmurHash3 x86_32 of its UTF-8 bytes with seed 0. Slots
 * fit a SQL {@code BIGINT}.
 *
 * <p><b>Points and ownership.</b> Each member with {@code v} virtual nodes places {@code v} points
 * {@link #pointOf(String, int) pointOf(member, i)} for {@code i = 0..v-1}. A point {@code p} owns
 * the half-open arc that <em>ends</em> at it, {@code [previous point, p)}; so a slot belongs to the
 * member of the first point strictly greater than it, wrapping around to the smallest point (seed
 * 002: with points {200, 300, 500, 800} the member at 300 owns [200, 300), the member at 200 owns
 * [800, 2^32) and [0, 200)). Two members hashing to one point: the smaller member id keeps it and
 * the other's point owns nothing, which keeps every query deterministic.
 *
 * <p><b>Consistency.</b> Points depend on the member id only, so adding a member only takes arcs
 * from others (nothing moves between two old members) and removing one gives each of its arcs to
 * the owner of the next surviving point, its successor. {@link #diff} lists exactly those moves.
 *
 * <p><b>Balance.</b> One point per member (as in the seed) splits the ring very unevenly; a member's
 * share has a relative standard deviation of about {@code 1/sqrt(v)}. See {@code docs/worker.md}
 * for measured max/min shares per virtual node count.
 *
 * <p>Instances are immutable and thread-safe; "modifications" return a new ring.
 */
public final class ConsistentHashRing {
    /** Number of slots: the slot space is {@code [0, SLOT_COUNT)}. */
    public static final long SLOT_COUNT = 1L << 32;
    /** Upper bound on virtual nodes per member, to keep rings small. */
    public static final int MAX_VIRTUAL_NODES = 4096;

    /** Bits for the member index packed under a 32-bit point (2^31 > any realistic member count). */
    private static final int MEMBER_BITS = 31;

    private static final ConsistentHashRing EMPTY = new ConsistentHashRing(Map.of());

    private final Map<String, Integer> members;
    private final long[] points;
    private final String[] pointOwners;
    private final List<OwnedRange> ranges;
    private final Map<String, List<SlotRange>> rangesByMember;

    private ConsistentHashRing(Map<String, Integer> members) {
        this.members = Collections.unmodifiableMap(new TreeMap<>(members));
        // pack (point, index of the member in id order) into one long and sort primitives: on equal
        // points the smaller index, i.e. the smaller member id, comes first and keeps the point
        String[] ids = this.members.keySet().toArray(new String[0]);
        int total = 0;
        for (int v : this.members.values()) {
            total += v;
        }
        long[] packed = new long[total];
        int n = 0;
        for (int m = 0; m < ids.length; m++) {
            // the bytes of pointOf(id, i) = UTF-8(id + "#" + i), built in place for speed
            byte[] id = ids[m].getBytes(StandardCharsets.UTF_8);
            byte[] buf = Arrays.copyOf(id, id.length + 12);
            buf[id.length] = '#';
            int v = this.members.get(ids[m]);
            for (int i = 0; i < v; i++) {
                int len = writeDecimal(buf, id.length + 1, i);
                long point = Integer.toUnsignedLong(Murmur3.hash32(buf, len, 0));
                packed[n++] = (point << MEMBER_BITS) | m;
            }
        }
        Arrays.sort(packed);
        long[] pts = new long[total];
        String[] owners = new String[total];
        int distinct = 0;
        for (long p : packed) {
            long point = p >>> MEMBER_BITS;
            if (distinct > 0 && pts[distinct - 1] == point) {
                continue;
            }
            pts[distinct] = point;
            owners[distinct++] = ids[(int) (p & ((1L << MEMBER_BITS) - 1))];
        }
        this.points = Arrays.copyOf(pts, distinct);
        this.pointOwners = Arrays.copyOf(owners, distinct);
        this.ranges = buildRanges(points, pointOwners);
        Map<String, List<SlotRange>> byMember = new HashMap<>();
        for (String m : this.members.keySet()) {
            byMember.put(m, new ArrayList<>());
        }
        for (OwnedRange r : ranges) {
            byMember.get(r.owner()).add(r.range());
        }
        byMember.replaceAll((m, list) -> List.copyOf(list));
        this.rangesByMember = Collections.unmodifiableMap(byMember);
    }

    /** The ring without members: it owns nothing and {@link #ownerOf} is always empty. */
    public static ConsistentHashRing empty() {
        return EMPTY;
    }

    /** A ring of the given members, each with its own number of virtual nodes (1..4096). */
    public static ConsistentHashRing of(Map<String, Integer> virtualNodesByMember) {
        requireNonNull(virtualNodesByMember, "members");
        virtualNodesByMember.forEach(ConsistentHashRing::validate);
        return virtualNodesByMember.isEmpty() ? EMPTY : new ConsistentHashRing(virtualNodesByMember);
    }

    /** A ring of the given members, all with {@code virtualNodes} points. */
    public static ConsistentHashRing of(Collection<String> members, int virtualNodes) {
        requireNonNull(members, "members");
        Map<String, Integer> map = new HashMap<>();
        for (String m : members) {
            map.put(m, virtualNodes);
        }
        return of(map);
    }

    /** This ring plus {@code member} (replacing its virtual node count if it is already present). */
    public ConsistentHashRing withMember(String member, int virtualNodes) {
        validate(member, virtualNodes);
        Map<String, Integer> next = new HashMap<>(members);
        next.put(member, virtualNodes);
        return new ConsistentHashRing(next);
    }

    /** This ring without {@code member}; the same ring if it is absent. */
    public ConsistentHashRing withoutMember(String member) {
        if (!members.containsKey(member)) {
            return this;
        }
        Map<String, Integer> next = new HashMap<>(members);
        next.remove(member);
        return next.isEmpty() ? EMPTY : new ConsistentHashRing(next);
    }

    /** Members and their virtual node counts, sorted by member id. */
    public Map<String, Integer> members() {
        return members;
    }

    public boolean isEmpty() {
        return members.isEmpty();
    }

    public boolean contains(String member) {
        return members.containsKey(member);
    }

    /** The member owning {@code slot}: that of the first point strictly greater, wrapping around. */
    public Optional<String> ownerOf(long slot) {
        requireSlot(slot);
        if (points.length == 0) {
            return Optional.empty();
        }
        int i = Arrays.binarySearch(points, slot);
        int next = i >= 0 ? i + 1 : -i - 1;
        return Optional.of(pointOwners[next == points.length ? 0 : next]);
    }

    /**
     * The ranges {@code member} owns, sorted by start, adjacent arcs merged. The wrap-around arc
     * appears as two ranges, one ending at {@code 2^32} and one starting at 0 (a sole member owns
     * the single range {@code [0, 2^32)}). Empty for a
     * non-member.
     */
    public List<SlotRange> rangesOf(String member) {
        return rangesByMember.getOrDefault(member, List.of());
    }

    /** Every range with its owner, sorted, covering {@code [0, 2^32)} exactly once (empty ring: none). */
    public List<OwnedRange> ranges() {
        return ranges;
    }

    /** The fraction of the slot space {@code member} owns, in {@code [0, 1]}. */
    public double shareOf(String member) {
        long sum = 0;
        for (SlotRange r : rangesOf(member)) {
            sum += r.size();
        }
        return (double) sum / SLOT_COUNT;
    }

    /** Largest member share divided by the smallest (infinite if some member owns nothing). */
    public double maxMinShareRatio() {
        double max = 0;
        double min = Double.MAX_VALUE;
        for (String m : members.keySet()) {
            double s = shareOf(m);
            max = Math.max(max, s);
            min = Math.min(min, s);
        }
        return members.isEmpty() ? 1.0 : (min == 0 ? Double.POSITIVE_INFINITY : max / min);
    }

    /**
     * The ranges whose owner differs between {@code before} and {@code after}, sorted and merged
     * where adjacent moves have the same source and target.
     */
    public static List<RangeMove> diff(ConsistentHashRing before, ConsistentHashRing after) {
        long[] bounds = mergeBounds(before.points, after.points);
        List<RangeMove> moves = new ArrayList<>();
        for (int i = 0; i + 1 < bounds.length; i++) {
            long start = bounds[i];
            long end = bounds[i + 1];
            Optional<String> from = before.ownerOf(start);
            Optional<String> to = after.ownerOf(start);
            if (from.equals(to)) {
                continue;
            }
            int last = moves.size() - 1;
            if (last >= 0
                    && moves.get(last).range().end() == start
                    && moves.get(last).from().equals(from)
                    && moves.get(last).to().equals(to)) {
                moves.set(
                        last,
                        new RangeMove(new SlotRange(moves.get(last).range().start(), end), from, to));
            } else {
                moves.add(new RangeMove(new SlotRange(start, end), from, to));
            }
        }
        return List.copyOf(moves);
    }

    /** The slot of a task key: unsigned MurmurHash3 x86_32 of its UTF-8 bytes, in {@code [0, 2^32)}. */
    public static long slotOf(String key) {
        requireNonNull(key, "key");
        return Murmur3.unsigned32(key);
    }

    /** Position of virtual node {@code index} of {@code member}: {@code slotOf(member + "#" + index)}. */
    public static long pointOf(String member, int index) {
        return Murmur3.unsigned32(member + "#" + index);
    }

    /** Writes the decimal digits of {@code value >= 0} at {@code at}; returns the end offset. */
    private static int writeDecimal(byte[] buf, int at, int value) {
        int digits = value < 10 ? 1 : (int) Math.log10(value) + 1;
        int end = at + digits;
        for (int i = end - 1; i >= at; i--) {
            buf[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        return end;
    }

    private static void validate(String member, Integer virtualNodes) {
        Names.requireToken(member, "member");
        requireArgument(
                virtualNodes != null, "virtualNodes", "virtualNodes must be in 1..%d, was null", MAX_VIRTUAL_NODES);
        requireVirtualNodes(virtualNodes);
    }

    /** Checks a member's virtual node count ({@code 1..}{@value #MAX_VIRTUAL_NODES}) and returns it. */
    public static int requireVirtualNodes(int virtualNodes) {
        requireArgument(
                virtualNodes >= 1 && virtualNodes <= MAX_VIRTUAL_NODES,
                "virtualNodes",
                "virtualNodes must be in 1..%d, was %d",
                MAX_VIRTUAL_NODES,
                virtualNodes);
        return virtualNodes;
    }

    private static void requireSlot(long slot) {
        requireArgument(slot >= 0 && slot < SLOT_COUNT, "slot", "slot must be in [0, 2^32), was %d", slot);
    }

    private static List<OwnedRange> buildRanges(long[] points, String[] owners) {
        if (points.length == 0) {
            return List.of();
        }
        List<OwnedRange> out = new ArrayList<>();
        long start = 0;
        for (int i = 0; i <= points.length; i++) {
            long end = i < points.length ? points[i] : SLOT_COUNT;
            String owner = owners[i < points.length ? i : 0];
            if (end > start) {
                int last = out.size() - 1;
                if (last >= 0 && out.get(last).owner().equals(owner)) {
                    out.set(
                            last,
                            new OwnedRange(new SlotRange(out.get(last).range().start(), end), owner));
                } else {
                    out.add(new OwnedRange(new SlotRange(start, end), owner));
                }
            }
            start = end;
        }
        return List.copyOf(out);
    }

    private static long[] mergeBounds(long[] a, long[] b) {
        long[] all = new long[a.length + b.length + 2];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        all[all.length - 2] = 0;
        all[all.length - 1] = SLOT_COUNT;
        return Arrays.stream(all).sorted().distinct().toArray();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConsistentHashRing other && members.equals(other.members);
    }

    @Override
    public int hashCode() {
        return Objects.hash(members);
    }

    @Override
    public String toString() {
        return "ConsistentHashRing" + members;
    }
}
