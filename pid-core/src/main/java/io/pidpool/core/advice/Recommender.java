package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.quota.OverageTariff;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Recommends moves of PIDs between modules that lower the cluster's projected overage cost.
 *
 * <h2>Contract</h2>
 *
 * <p>For a {@link UsageReport}, {@link #recommend} returns recommendations (each: PIDs from one
 * source module to one target module) such that:
 *
 * <ul>
 *   <li><b>Each lowers the cost.</b> Applied in order, every recommendation, and every single move
 *       inside it, strictly lowers the projected overage cost of the cluster (by more than {@link
 *       RecommenderPolicy#minSavingPerMove()} per move); applied alone to the snapshot, every
 *       recommendation strictly lowers it too ({@link Recommendation#standaloneDelta()}). So
 *       applying all of them, any prefix of them (at move granularity), or any single one never
 *       raises the projected cost. Subsets in another order are not promised.
 *   <li><b>Minimums.</b> No module that gives PIDs is left with fewer ACTIVE PIDs than {@link
 *       ModuleUsage#minActivePids()}, applied in order or alone.
 *   <li><b>Only healthy PIDs, each once.</b> Only ACTIVE PIDs move (never COOLDOWN or DISABLED), a PID
 *       is named at most once per run, a PID moved into a module is not moved on, and modules passed
 *       as {@code frozen} (e.g. while their brake is engaged) neither give nor take.
 *   <li><b>A module gives or takes</b>, not both, within a run: a move costs a logout and a login,
 *       so PIDs are not passed through a module on their way elsewhere.
 *   <li><b>Bounded.</b> At most {@link RecommenderPolicy#maxMoves()} PIDs per run.
 *   <li><b>Deterministic.</b> The same report (whatever the order of its input lists) gives the same
 *       recommendations.
 * </ul>
 *
 * <h2>Algorithm</h2>
 *
 * <p>Greedy, one PID at a time. Sources are modules with slack (quota projected to stay unused) and
 * more ACTIVE PIDs than their minimum; targets are modules with a shortfall (demand beyond the quota
 * left): a module without one cannot gain from another PID. For each source, up to three
 * candidates are weighed: its PID with the most quota left, the PID with the most quota left that
 * still fits in its slack (free for the source to give), and the next bigger one. Each (source
 * candidate, target) pair is priced exactly with the projection model ({@code WaterFill}), and the
 * move with the lowest cost delta is taken if it lowers the cost by more than the minimum saving and
 * the recommendations it may end up in (all moves between the same two modules; the current run of
 * consecutive ones) also lower the cost when applied alone; otherwise the next best move is tried.
 * Ties go to the target, source and PID id in key order. After a move only the two modules it
 * touched are priced again.
 *
 * <p>The moves are then grouped into one recommendation per pair of modules, in the order of each
 * pair's first move, and that order is replayed from the snapshot with every move priced again; if
 * some move would not save enough in that order, the greedy order (cut where the pair changes) is
 * kept instead. Why this never raises the cost: every move is priced exactly in the state the moves
 * before it leave and kept only when that price is negative (see {@code docs/advice.md}).
 *
 * <p>Cost per step: {@code O(S * T)} comparisons for S sources and T targets (each at most {@link
 * RecommenderPolicy#maxModulesPerSide()}) plus {@code O(S + T)} new what-if prices, each {@code
 * O(log(range) * log P)}.
 *
 * <p>Concurrency: stateless apart from its immutable policy; thread-safe.
 */
public final class Recommender {
    private static final int CANDIDATES = 3;

    private final RecommenderPolicy policy;

    public Recommender(RecommenderPolicy policy) {
        this.policy = requireNonNull(policy, "policy");
    }

    public RecommenderPolicy policy() {
        return policy;
    }

    /** Recommendations for {@code report}, no module frozen. */
    public Recommendations recommend(UsageReport report) {
        return recommend(report, Set.of());
    }

    /**
     * Recommendations for {@code report}; modules in {@code frozen} (e.g. while the planner's brake is
     * engaged there) neither give nor take PIDs.
     */
    public Recommendations recommend(UsageReport report, Set<ModuleKey> frozen) {
        requireNonNull(report, "report");
        requireNonNull(frozen, "frozen");
        return new Run(report, frozen, policy).run();
    }

    /** One run's mutable state. Confined to the calling thread. */
    private static final class Run {
        /** Moving original PID {@code pid} from book {@code source} to book {@code target}. */
        private record Move(int source, int target, int pid, BigDecimal delta) {}

        /** The moves between one pair of modules, in the order they were chosen. */
        private static final class Group {
            final List<Move> moves = new ArrayList<>();
            WaterFill.Multiset positions;

            Group(WaterFill.Multiset none) {
                this.positions = none;
            }
        }

        private final UsageReport report;
        private final Set<ModuleKey> frozen;
        private final RecommenderPolicy policy;
        private final OverageTariff tariff;
        private final List<PidProjection> pids;
        private final boolean[] moved;
        private final WaterFill.Multiset none;
        private final BigDecimal minSaving;
        private Book[] books;
        private BigDecimal total;

        private final List<Move> sequence = new ArrayList<>();
        private final Map<Long, Group> groups = new LinkedHashMap<>();
        private Group run;
        private long runPair = -1;

        Run(UsageReport report, Set<ModuleKey> frozen, RecommenderPolicy policy) {
            this.report = report;
            this.frozen = frozen;
            this.policy = policy;
            this.tariff = report.tariff();
            this.pids = report.pids();
            this.moved = new boolean[pids.size()];
            this.none = WaterFill.Multiset.empty(tariff);
            this.minSaving = policy.minSavingPerMove();
            this.books = freshBooks();
            this.total = report.totalProjectedOverageCost();
        }

        private Book[] freshBooks() {
            List<ModuleProjection> modules = report.modules();
            Book[] fresh = new Book[modules.size()];
            for (int i = 0; i < fresh.length; i++) {
                ModuleProjection projection = modules.get(i);
                ModuleModel model = report.models().get(projection.key());
                fresh[i] = new Book(i, model, projection, frozen.contains(projection.key()));
            }
            return fresh;
        }

        Recommendations run() {
            BigDecimal before = total;
            boolean limitReached = false;
            while (true) {
                Move move = nextMove();
                if (move == null) {
                    break;
                }
                if (sequence.size() == policy.maxMoves()) {
                    limitReached = true;
                    break;
                }
                accept(move);
            }
            BigDecimal after = total;
            List<Recommendation> recommendations = replay(new ArrayList<>(groupedOrder()), true);
            if (recommendations == null) {
                recommendations = replay(runsInOrder(), false);
            }
            return new Recommendations(report.month(), report.at(), before, after, recommendations, limitReached);
        }

        /** The best admissible move in the current state, or null. */
        private Move nextMove() {
            List<Book> sources = pick(true);
            List<Book> targets = pick(false);
            if (sources.isEmpty() || targets.isEmpty()) {
                return null;
            }
            Set<Move> rejected = new HashSet<>();
            while (true) {
                Move best = null;
                for (Book target : targets) {
                    for (Book source : sources) {
                        if (source == target) {
                            continue;
                        }
                        int[] candidates = source.candidates();
                        for (int c = 0; c < candidates.length; c++) {
                            int pid = candidates[c];
                            BigDecimal delta = source.removalDelta(c).add(target.additionDelta(position(pid)));
                            if (delta.add(minSaving).signum() >= 0) {
                                continue;
                            }
                            Move move = new Move(source.index, target.index, pid, delta);
                            if (!rejected.contains(move) && (best == null || compare(move, best) < 0)) {
                                best = move;
                            }
                        }
                    }
                }
                if (best == null || admissibleAlone(best)) {
                    return best;
                }
                rejected.add(best);
            }
        }

        /** Sources (slack, above minimum, something to give) or targets (shortfall), best first, capped. */
        private List<Book> pick(boolean sources) {
            List<Book> picked = new ArrayList<>();
            for (Book book : books) {
                if (book.frozen) {
                    continue;
                }
                // A module either gives or takes within a run: a move costs a logout and a login, so
                // PIDs are not passed through a module on their way elsewhere.
                if (sources
                        ? !book.took
                                && book.slack() > 0
                                && book.active > book.model.minActivePids()
                                && book.hasCandidate()
                        : !book.gave && book.shortfall() > 0) {
                    picked.add(book);
                }
            }
            Comparator<Book> order = sources
                    ? Comparator.comparingLong(Book::slack).reversed()
                    : Comparator.comparingLong(Book::shortfall).reversed();
            picked.sort(order.thenComparing(b -> b.model.key()));
            return picked.size() > policy.maxModulesPerSide() ? picked.subList(0, policy.maxModulesPerSide()) : picked;
        }

        private int compare(Move a, Move b) {
            int c = a.delta.compareTo(b.delta);
            if (c == 0) {
                c = books[a.target].model.key().compareTo(books[b.target].model.key());
            }
            if (c == 0) {
                c = books[a.source].model.key().compareTo(books[b.source].model.key());
            }
            if (c == 0) {
                c = pids.get(a.pid).id().compareTo(pids.get(b.pid).id());
            }
            return c;
        }

        private long pair(Move move) {
            return (long) move.source * books.length + move.target;
        }

        /**
         * Whether both recommendations this move may end up in (all moves between its two modules, and
         * the current run of consecutive moves between them) lower the snapshot's cost when applied
         * alone, and keep the source's minimum then.
         */
        private boolean admissibleAlone(Move move) {
            long pair = pair(move);
            long x = position(move.pid);
            Group group = groups.get(pair);
            WaterFill.Multiset all = (group == null ? none : group.positions).with(x, tariff);
            if (!admissibleAlone(move, all)) {
                return false;
            }
            boolean runIsGroup = pair == runPair && run.moves.size() == (group == null ? 0 : group.moves.size());
            if (runIsGroup) {
                return true;
            }
            WaterFill.Multiset consecutive = (pair == runPair ? run.positions : none).with(x, tariff);
            return admissibleAlone(move, consecutive);
        }

        private boolean admissibleAlone(Move move, WaterFill.Multiset positions) {
            Book source = books[move.source];
            return source.model.activePids().length - positions.size() >= source.model.minActivePids()
                    && standaloneDelta(source, books[move.target], positions).signum() < 0;
        }

        private BigDecimal standaloneDelta(Book source, Book target, WaterFill.Multiset positions) {
            BigDecimal sourceAfter = source.model.cost(none, positions, 0, 0);
            BigDecimal targetAfter = target.model.cost(positions, none, 0, 0);
            return sourceAfter.add(targetAfter).subtract(source.originalCost).subtract(target.originalCost);
        }

        private void accept(Move move) {
            long x = position(move.pid);
            moved[move.pid] = true;
            Book source = books[move.source];
            Book target = books[move.target];
            BigDecimal oldCosts = source.cost.add(target.cost);
            source.give(x);
            target.take(x);
            total = total.subtract(oldCosts).add(source.cost).add(target.cost);
            sequence.add(move);
            long pair = pair(move);
            Group group = groups.computeIfAbsent(pair, p -> new Group(none));
            group.moves.add(move);
            group.positions = group.positions.with(x, tariff);
            if (pair != runPair) {
                run = new Group(none);
                runPair = pair;
            }
            run.moves.add(move);
            run.positions = run.positions.with(x, tariff);
        }

        /** The moves grouped by pair of modules, groups in the order of their first move. */
        private List<List<Move>> groupedOrder() {
            List<List<Move>> order = new ArrayList<>(groups.size());
            groups.values().forEach(g -> order.add(g.moves));
            return order;
        }

        /** The moves in the order chosen, cut where the pair of modules changes. */
        private List<List<Move>> runsInOrder() {
            List<List<Move>> order = new ArrayList<>();
            List<Move> current = null;
            for (Move move : sequence) {
                if (current == null || current.get(0).source != move.source || current.get(0).target != move.target) {
                    current = new ArrayList<>();
                    order.add(current);
                }
                current.add(move);
            }
            return order;
        }

        /**
         * Applies the recommendations from the snapshot in this order, pricing every move in the state
         * the ones before it leave, and describes them. With {@code verify}, answers null unless every
         * move lowers the cost by more than the minimum saving and keeps its source's minimum (the
         * greedy order is known to; another order has to be checked).
         */
        private List<Recommendation> replay(List<List<Move>> order, boolean verify) {
            books = freshBooks();
            BigDecimal current = report.totalProjectedOverageCost();
            List<Recommendation> recommendations = new ArrayList<>(order.size());
            for (List<Move> moves : order) {
                Book source = books[moves.get(0).source];
                Book target = books[moves.get(0).target];
                int sourceActive = source.active;
                int targetActive = target.active;
                long sourceRemaining = source.remaining;
                long targetRemaining = target.remaining;
                BigDecimal sourceCost = source.cost;
                BigDecimal targetCost = target.cost;
                BigDecimal before = current;
                WaterFill.Multiset positions = none;
                List<String> ids = new ArrayList<>(moves.size());
                long carried = 0;
                for (Move move : moves) {
                    long x = position(move.pid);
                    BigDecimal oldCosts = source.cost.add(target.cost);
                    source.give(x);
                    target.take(x);
                    BigDecimal delta = source.cost.add(target.cost).subtract(oldCosts);
                    if (verify
                            && (delta.add(minSaving).signum() >= 0 || source.active < source.model.minActivePids())) {
                        return null;
                    }
                    current = current.add(delta);
                    positions = positions.with(x, tariff);
                    ids.add(pids.get(move.pid).id());
                    carried += Math.max(0, -x);
                }
                ModuleEffect sourceEffect = new ModuleEffect(
                        source.model.key(),
                        sourceActive,
                        source.active,
                        sourceRemaining,
                        source.remaining,
                        source.model.demand(),
                        sourceCost,
                        source.cost);
                ModuleEffect targetEffect = new ModuleEffect(
                        target.model.key(),
                        targetActive,
                        target.active,
                        targetRemaining,
                        target.remaining,
                        target.model.demand(),
                        targetCost,
                        target.cost);
                recommendations.add(new Recommendation(
                        sourceEffect,
                        targetEffect,
                        ids,
                        carried,
                        before,
                        current,
                        standaloneDelta(source, target, positions)));
            }
            return recommendations;
        }

        private long position(int pid) {
            PidProjection p = pids.get(pid);
            return p.used() - p.monthlyQuota();
        }

        /** One module during the run: its changes so far, its current cost and cached what-if prices. */
        private final class Book {
            final int index;
            final ModuleModel model;
            final boolean frozen;
            final BigDecimal originalCost;
            WaterFill.Multiset added;
            WaterFill.Multiset removed;
            int active;
            long remaining;
            BigDecimal cost;
            boolean gave;
            boolean took;

            /** Original ACTIVE PIDs by (position, id); built when first asked. */
            private int[] order;

            private long[] orderPositions;
            private int[] candidates;
            private BigDecimal[] removalDeltas;
            private final Map<Long, BigDecimal> additionDeltas = new HashMap<>();

            Book(int index, ModuleModel model, ModuleProjection projection, boolean frozen) {
                this.index = index;
                this.model = model;
                this.frozen = frozen;
                this.originalCost = projection.projectedOverageCost();
                this.added = none;
                this.removed = none;
                this.active = projection.activePids();
                this.remaining = projection.remaining();
                this.cost = originalCost;
            }

            long slack() {
                return Math.max(0, remaining - model.demand());
            }

            long shortfall() {
                return Math.max(0, model.demand() - remaining);
            }

            boolean hasCandidate() {
                return candidates().length > 0;
            }

            /** Up to three unmoved original PIDs: most quota left, best fit in the slack, next bigger. */
            int[] candidates() {
                if (candidates == null) {
                    sortOnce();
                    int[] picked = new int[CANDIDATES];
                    int count = 0;
                    int first = nextUnmoved(0);
                    if (first >= 0) {
                        picked[count++] = order[first];
                        int fit = nextUnmoved(lowerBound(-slack()));
                        if (fit >= 0 && fit != first) {
                            picked[count++] = order[fit];
                        }
                        int bigger = previousUnmoved((fit >= 0 ? fit : order.length) - 1);
                        if (bigger >= 0 && bigger != first && bigger != fit) {
                            picked[count++] = order[bigger];
                        }
                    }
                    candidates = Arrays.copyOf(picked, count);
                    removalDeltas = new BigDecimal[count];
                }
                return candidates;
            }

            /** The change of this module's cost if candidate {@code c} left. */
            BigDecimal removalDelta(int c) {
                if (removalDeltas[c] == null) {
                    removalDeltas[c] = model.cost(added, removed, position(candidates[c]), -1)
                            .subtract(cost);
                }
                return removalDeltas[c];
            }

            /** The change of this module's cost if a PID at position {@code x} joined. */
            BigDecimal additionDelta(long x) {
                BigDecimal delta = additionDeltas.get(x);
                if (delta == null) {
                    delta = model.cost(added, removed, x, 1).subtract(cost);
                    additionDeltas.put(x, delta);
                }
                return delta;
            }

            void give(long x) {
                gave = true;
                removed = removed.with(x, tariff);
                active--;
                remaining -= Math.max(0, -x);
                changed();
            }

            void take(long x) {
                took = true;
                added = added.with(x, tariff);
                active++;
                remaining += Math.max(0, -x);
                changed();
            }

            private void changed() {
                cost = model.cost(added, removed, 0, 0);
                candidates = null;
                removalDeltas = null;
                additionDeltas.clear();
            }

            /**
             * Sorts by position as primitive longs ({@code position + 2^32} in the high bits, the index
             * in the low 21), then orders runs of equal positions by PID id, so the order does not
             * depend on the snapshot's order. {@code 2^32 > -min position} and {@code 2^33 >} max
             * position {@code + 2^32}, and indices are below {@code 2^21 > UsageSnapshot.MAX_PIDS}.
             */
            private void sortOnce() {
                if (order != null) {
                    return;
                }
                int[] active = model.activePids();
                long[] keys = new long[active.length];
                for (int i = 0; i < active.length; i++) {
                    keys[i] = ((position(active[i]) + (1L << 32)) << 21) | i;
                }
                Arrays.sort(keys);
                order = new int[active.length];
                orderPositions = new long[active.length];
                for (int i = 0; i < keys.length; i++) {
                    order[i] = active[(int) (keys[i] & ((1 << 21) - 1))];
                    orderPositions[i] = position(order[i]);
                }
                for (int from = 0; from < order.length; ) {
                    int to = from + 1;
                    while (to < order.length && orderPositions[to] == orderPositions[from]) {
                        to++;
                    }
                    if (to - from > 1) {
                        Integer[] run = new Integer[to - from];
                        for (int i = from; i < to; i++) {
                            run[i - from] = order[i];
                        }
                        Arrays.sort(run, Comparator.comparing(i -> pids.get(i).id()));
                        for (int i = from; i < to; i++) {
                            order[i] = run[i - from];
                        }
                    }
                    from = to;
                }
            }

            private int lowerBound(long w) {
                int lo = 0;
                int hi = orderPositions.length;
                while (lo < hi) {
                    int mid = (lo + hi) >>> 1;
                    if (orderPositions[mid] < w) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                return lo;
            }

            private int nextUnmoved(int from) {
                for (int i = from; i < order.length; i++) {
                    if (!moved[order[i]]) {
                        return i;
                    }
                }
                return -1;
            }

            private int previousUnmoved(int from) {
                for (int i = from; i >= 0; i--) {
                    if (!moved[order[i]]) {
                        return i;
                    }
                }
                return -1;
            }
        }
    }
}
