package io.pidpool.server.jdbc;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.Deduction;
import io.pidpool.core.port.DeductionBalance;
import io.pidpool.core.port.Refund;
import io.pidpool.core.port.RefundReceipt;
import io.pidpool.core.port.SequenceProgress;
import io.pidpool.core.port.StorageLimits;
import io.pidpool.core.port.UsageLedger;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.jdbi.v3.core.Handle;

/**
 * {@link UsageLedger} on tables {@code usage_client}, {@code usage_sequence},
 * {@code usage_deduction} and {@code usage_refund}.
 *
 * <p>Concurrency: every event first locks its client's row ({@code SELECT ... FOR UPDATE}, creating
 * it under a savepoint if this is the client's first event), so events of one client, replays
 * included, run one after another and a replay sees the first attempt committed. A refund then
 * locks its deduction's row and raises {@code refunded_total} with a conditional UPDATE, so
 * refunds of one deduction from different clients are serialised too and can never sum above it;
 * the CHECK {@code refunded_total <= amount} is the last line. Locks are always taken client first,
 * deduction second, so two events cannot deadlock on them.
 *
 * <p>A refund id is unique per deduction (key {@code (deduction_id, refund_id)}, migration V9), the
 * same scope as in Redis (docs/quota.md §5a).
 */
final class JdbiUsageLedger implements UsageLedger {
    private static final int PAGE = 1_000;
    private static final String DEDUCTION_COLUMNS =
            "deduction_id, pid_id, client_id, client_seq, amount, refunded_total, usage_month, occurred_at";
    private static final String REFUND_COLUMNS =
            "r.refund_id, r.deduction_id, r.client_id, r.client_seq, r.amount, r.refunded_after, r.occurred_at";

    private final JdbiSession session;

    JdbiUsageLedger(JdbiSession session) {
        this.session = session;
    }

    @Override
    public boolean recordDeduction(Deduction deduction) {
        Preconditions.requireNonNull(deduction, "deduction");
        return session.write("deductionId", h -> {
            SequenceProgress progress = lockClient(h, deduction.clientId());
            Optional<DeductionBalance> stored = deduction(h, deduction.id(), false);
            if (stored.isPresent()) {
                if (stored.get().deduction().equals(deduction)) {
                    return false;
                }
                throw PidPoolException.conflict(
                        "deductionId", "deduction %s was recorded with other content", deduction.id());
            }
            requireSequenceFree(h, deduction.clientId(), deduction.sequence());
            insertSequence(h, deduction.clientId(), deduction.sequence(), deduction.id());
            h.createUpdate("INSERT INTO usage_deduction (" + DEDUCTION_COLUMNS + ") VALUES (:id, :pid, :client,"
                            + " :seq, :amount, 0, :month, :at)")
                    .bind("id", deduction.id())
                    .bind("pid", deduction.pidId())
                    .bind("client", deduction.clientId())
                    .bind("seq", deduction.sequence())
                    .bind("amount", deduction.amount())
                    .bind("month", month(deduction.month()))
                    .bind("at", Rows.toDb(deduction.occurredAt()))
                    .execute();
            advance(h, progress, deduction.sequence());
            return true;
        });
    }

    @Override
    public RefundReceipt recordRefund(Refund refund) {
        Preconditions.requireNonNull(refund, "refund");
        return session.write("refundId", h -> {
            SequenceProgress progress = lockClient(h, refund.clientId());
            Optional<RefundReceipt> first = h.createQuery("SELECT " + REFUND_COLUMNS + ", d.amount AS deduction_amount"
                            + " FROM usage_refund r JOIN usage_deduction d ON d.deduction_id = r.deduction_id"
                            + " WHERE r.deduction_id = :deduction AND r.refund_id = :id")
                    .bind("deduction", refund.deductionId())
                    .bind("id", refund.id())
                    .map((rs, ctx) -> new RefundReceipt(
                            refundRow(rs), rs.getLong("refunded_after"), rs.getLong("deduction_amount")))
                    .findOne();
            if (first.isPresent()) {
                if (first.get().refund().equals(refund)) {
                    return first.get();
                }
                throw PidPoolException.conflict("refundId", "refund %s was recorded with other content", refund.id());
            }
            DeductionBalance balance = deduction(h, refund.deductionId(), true)
                    .orElseThrow(() -> PidPoolException.notFound(
                            "deductionId", "deduction %s is not recorded", refund.deductionId()));
            long amount = balance.deduction().amount();
            long total = balance.refundedTotal() + refund.amount();
            if (total > amount) {
                throw PidPoolException.invalid(
                        "amount",
                        "refund %s of %d would bring the refunds of deduction %s to %d, above its amount %d",
                        refund.id(),
                        refund.amount(),
                        refund.deductionId(),
                        total,
                        amount);
            }
            requireSequenceFree(h, refund.clientId(), refund.sequence());
            int raised = h.createUpdate("UPDATE usage_deduction SET refunded_total = refunded_total + :amount"
                            + " WHERE deduction_id = :id AND refunded_total + :amount <= amount")
                    .bind("id", refund.deductionId())
                    .bind("amount", refund.amount())
                    .execute();
            if (raised != 1) {
                throw new IllegalStateException("refunded_total of " + refund.deductionId() + " moved under its lock");
            }
            insertSequence(h, refund.clientId(), refund.sequence(), refund.id());
            h.createUpdate("INSERT INTO usage_refund (refund_id, deduction_id, client_id, client_seq, amount,"
                            + " refunded_after, occurred_at) VALUES (:id, :deduction, :client, :seq, :amount, :after,"
                            + " :at)")
                    .bind("id", refund.id())
                    .bind("deduction", refund.deductionId())
                    .bind("client", refund.clientId())
                    .bind("seq", refund.sequence())
                    .bind("amount", refund.amount())
                    .bind("after", total)
                    .bind("at", Rows.toDb(refund.occurredAt()))
                    .execute();
            advance(h, progress, refund.sequence());
            return new RefundReceipt(refund, total, amount);
        });
    }

    @Override
    public Optional<DeductionBalance> findDeduction(String deductionId) {
        Preconditions.requireNonNull(deductionId, "deductionId");
        return session.read(h -> deduction(h, deductionId, false));
    }

    @Override
    public List<Refund> refundsOf(String deductionId) {
        Preconditions.requireNonNull(deductionId, "deductionId");
        return session.read(h -> h.createQuery("SELECT " + REFUND_COLUMNS
                        + " FROM usage_refund r WHERE r.deduction_id = :id ORDER BY r.refunded_after")
                .bind("id", deductionId)
                .map((rs, ctx) -> refundRow(rs))
                .list());
    }

    @Override
    public long netUsage(String pidId, YearMonth month) {
        Names.requirePidId(pidId, "pidId");
        Preconditions.requireNonNull(month, "month");
        return session.read(h -> h.createQuery("SELECT COALESCE(SUM(amount - refunded_total), 0) FROM usage_deduction"
                        + " WHERE pid_id = :pid AND usage_month = :month")
                .bind("pid", pidId)
                .bind("month", month(month))
                .mapTo(Long.class)
                .one());
    }

    @Override
    public Map<String, Long> netUsageByPid(YearMonth month) {
        Preconditions.requireNonNull(month, "month");
        return session.read(h -> {
            var sums = new TreeMap<String, Long>();
            h.createQuery("SELECT pid_id, SUM(amount - refunded_total) AS used FROM usage_deduction"
                            + " WHERE usage_month = :month GROUP BY pid_id")
                    .bind("month", month(month))
                    .map((rs, ctx) -> sums.put(rs.getString("pid_id"), rs.getLong("used")))
                    .list();
            return Collections.unmodifiableMap(sums);
        });
    }

    @Override
    public Optional<SequenceProgress> progress(String clientId) {
        Names.requireToken(clientId, "clientId");
        return session.read(h -> progress(h, clientId, false));
    }

    @Override
    public List<Long> missingSequences(String clientId, long upTo, int limit) {
        Names.requireToken(clientId, "clientId");
        Preconditions.requireArgument(upTo >= 0, "upTo", "upTo must be >= 0, was %d", upTo);
        StorageLimits.requireLimit(limit);
        return session.snapshot(h -> {
            long next = progress(h, clientId, false)
                    .map(p -> p.contiguousThrough() + 1)
                    .orElse(1L);
            var missing = new ArrayList<Long>();
            // page through the numbers received above the contiguous run; each page is bounded
            while (next <= upTo && missing.size() < limit) {
                List<Long> present = h.createQuery("SELECT client_seq FROM usage_sequence WHERE client_id = :client"
                                + " AND client_seq >= :next AND client_seq <= :upTo ORDER BY client_seq FETCH FIRST "
                                + PAGE + " ROWS ONLY")
                        .bind("client", clientId)
                        .bind("next", next)
                        .bind("upTo", upTo)
                        .mapTo(Long.class)
                        .list();
                for (long seq : present) {
                    while (next < seq && missing.size() < limit) {
                        missing.add(next++);
                    }
                    if (missing.size() >= limit) {
                        break;
                    }
                    next = seq + 1;
                }
                if (present.size() < PAGE) {
                    while (next <= upTo && missing.size() < limit) {
                        missing.add(next++);
                    }
                }
            }
            return List.copyOf(missing);
        });
    }

    /** Locks the client's progress row, creating it at (0, 0) for a client's first event. */
    private SequenceProgress lockClient(Handle h, String clientId) {
        Optional<SequenceProgress> locked = progress(h, clientId, true);
        if (locked.isPresent()) {
            return locked.get();
        }
        // two first events of one client may race to create the row: the loser's insert fails and is
        // rolled back to the savepoint, and its second look blocks until the winner commits
        session.attempt(h, x -> x.createUpdate("INSERT INTO usage_client (client_id, contiguous_through, highest_seen)"
                        + " VALUES (:client, 0, 0)")
                .bind("client", clientId)
                .execute());
        return progress(h, clientId, true)
                .orElseThrow(() -> new IllegalStateException("usage_client row of " + clientId + " vanished"));
    }

    private static Optional<SequenceProgress> progress(Handle h, String clientId, boolean lock) {
        return h.createQuery("SELECT client_id, contiguous_through, highest_seen FROM usage_client"
                        + " WHERE client_id = :client" + (lock ? " FOR UPDATE" : ""))
                .bind("client", clientId)
                .map((rs, ctx) -> new SequenceProgress(
                        rs.getString("client_id"), rs.getLong("contiguous_through"), rs.getLong("highest_seen")))
                .findOne();
    }

    private static void requireSequenceFree(Handle h, String clientId, long sequence) {
        Optional<String> used = h.createQuery(
                        "SELECT event_id FROM usage_sequence WHERE client_id = :client AND client_seq = :seq")
                .bind("client", clientId)
                .bind("seq", sequence)
                .mapTo(String.class)
                .findOne();
        if (used.isPresent()) {
            throw PidPoolException.conflict(
                    "sequence", "sequence %d of client %s was used by event %s", sequence, clientId, used.get());
        }
    }

    private static void insertSequence(Handle h, String clientId, long sequence, String eventId) {
        h.createUpdate("INSERT INTO usage_sequence (client_id, client_seq, event_id) VALUES (:client, :seq, :event)")
                .bind("client", clientId)
                .bind("seq", sequence)
                .bind("event", eventId)
                .execute();
    }

    /** Moves the client's contiguous mark over {@code sequence} and whatever arrived after it. */
    private static void advance(Handle h, SequenceProgress progress, long sequence) {
        long contiguous = progress.contiguousThrough();
        if (sequence == contiguous + 1) {
            contiguous = sequence;
            boolean more = true;
            while (more) {
                List<Long> next = h.createQuery("SELECT client_seq FROM usage_sequence WHERE client_id = :client"
                                + " AND client_seq > :after ORDER BY client_seq FETCH FIRST " + PAGE + " ROWS ONLY")
                        .bind("client", progress.clientId())
                        .bind("after", contiguous)
                        .mapTo(Long.class)
                        .list();
                more = next.size() == PAGE;
                for (long seq : next) {
                    if (seq != contiguous + 1) {
                        more = false;
                        break;
                    }
                    contiguous = seq;
                }
            }
        }
        h.createUpdate("UPDATE usage_client SET contiguous_through = :contiguous, highest_seen = :highest"
                        + " WHERE client_id = :client")
                .bind("client", progress.clientId())
                .bind("contiguous", contiguous)
                .bind("highest", Math.max(progress.highestSeen(), sequence))
                .execute();
    }

    private static Optional<DeductionBalance> deduction(Handle h, String id, boolean lock) {
        return h.createQuery("SELECT " + DEDUCTION_COLUMNS + " FROM usage_deduction WHERE deduction_id = :id"
                        + (lock ? " FOR UPDATE" : ""))
                .bind("id", id)
                .map((rs, ctx) -> {
                    int month = rs.getInt("usage_month");
                    return new DeductionBalance(
                            new Deduction(
                                    rs.getString("deduction_id"),
                                    rs.getString("pid_id"),
                                    rs.getString("client_id"),
                                    rs.getLong("client_seq"),
                                    rs.getLong("amount"),
                                    YearMonth.of(month / 100, month % 100),
                                    Rows.instant(rs, "occurred_at")),
                            rs.getLong("refunded_total"));
                })
                .findOne();
    }

    private static Refund refundRow(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new Refund(
                rs.getString("refund_id"),
                rs.getString("deduction_id"),
                rs.getString("client_id"),
                rs.getLong("client_seq"),
                rs.getLong("amount"),
                Rows.instant(rs, "occurred_at"));
    }

    private static int month(YearMonth month) {
        return month.getYear() * 100 + month.getMonthValue();
    }
}
