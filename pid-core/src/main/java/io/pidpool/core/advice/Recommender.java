package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.quota.OverageTariff;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
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
 * touched are priced again: each module's state in a run, with its candidates and cached what-if
 * prices, is a {@link ModuleBook}.
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
 * <p>One run stays one class: choosing, the stand-alone checks and the replay share its books and
 * its groups of moves.
 *
 * <p>Concurrency: stateless apart from its immutable policy; thread-safe.
 */
public final class Recommender {
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
        private ModuleBook[] books;
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

        private ModuleBook[] freshBooks() {
            List<ModuleProjection> modules = report.modules();
            ModuleBook[] fresh = new ModuleBook[modules.size()];
            for (int i = 0; i < fresh.length; i++) {
                ModuleProjection projection = modules.get(i);
                ModuleModel model = report.models().get(projection.key());
                fresh[i] = new ModuleBook(
                        i, model, projection, frozen.contains(projection.key()), pids, moved, tariff, none);
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
            List<ModuleBook> sources = pick(true);
            List<ModuleBook> targets = pick(false);
            if (sources.isEmpty() || targets.isEmpty()) {
                return null;
            }
            Set<Move> rejected = new HashSet<>();
            while (true) {
                Move best = null;
                for (ModuleBook target : targets) {
                    for (ModuleBook source : sources) {
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
        private List<ModuleBook> pick(boolean sources) {
            List<ModuleBook> picked = new ArrayList<>();
            for (ModuleBook book : books) {
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
            Comparator<ModuleBook> order = sources
                    ? Comparator.comparingLong(ModuleBook::slack).reversed()
                    : Comparator.comparingLong(ModuleBook::shortfall).reversed();
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
            ModuleBook source = books[move.source];
            return source.model.activePids().length - positions.size() >= source.model.minActivePids()
                    && standaloneDelta(source, books[move.target], positions).signum() < 0;
        }

        private BigDecimal standaloneDelta(ModuleBook source, ModuleBook target, WaterFill.Multiset positions) {
            BigDecimal sourceAfter = source.model.cost(none, positions, 0, 0);
            BigDecimal targetAfter = target.model.cost(positions, none, 0, 0);
            return sourceAfter.add(targetAfter).subtract(source.originalCost).subtract(target.originalCost);
        }

        private void accept(Move move) {
            long x = position(move.pid);
            moved[move.pid] = true;
            ModuleBook source = books[move.source];
            ModuleBook target = books[move.target];
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
                ModuleBook source = books[moves.get(0).source];
                ModuleBook target = books[moves.get(0).target];
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
    }
}
