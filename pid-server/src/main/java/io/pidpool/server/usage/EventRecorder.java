package io.pidpool.server.usage;

import io.pidpool.client.internal.quota.UsageEvent;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Deduction;
import io.pidpool.core.port.DeductionBalance;
import io.pidpool.core.port.Refund;
import io.pidpool.core.port.UsageLedger;
import io.pidpool.core.quota.QuotaMonth;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the usage events of one sync pass to the database ledger and counts what became of each:
 * recorded, a replay the ledger already had, a reset (no ledger entry), or an orphan the ledger
 * refused. Idempotent by id, so a replayed page changes nothing; it never throws for content
 * problems (those become orphans, whose PID-months the pass then catches up from the month records).
 *
 * <p>One instance per pass over one shard; {@code covered} is the shard's memory across passes of
 * sequence numbers that are no ledger entry of their own (resets, usage recorded under other numbers).
 */
final class EventRecorder {
    // the sync's category: operators follow one logger for everything a pass did
    private static final Logger LOG = LoggerFactory.getLogger(UsageLedgerSync.class);

    private final int shard;
    private final UsageLedger ledger;
    private final MonthRecordRecovery records;
    private final Map<String, Set<Long>> covered;
    private int recorded;
    private int duplicates;
    private int resets;
    private final List<String> orphans = new ArrayList<>();
    private final Set<QuotaMonth> months = new HashSet<>();
    /** PID-months of orphaned events: the ledger catches up with their month records. */
    private final Set<Map.Entry<String, QuotaMonth>> drifted = new LinkedHashSet<>();

    EventRecorder(int shard, UsageLedger ledger, MonthRecordRecovery records, Map<String, Set<Long>> covered) {
        this.shard = shard;
        this.ledger = ledger;
        this.records = records;
        this.covered = covered;
    }

    int recorded() {
        return recorded;
    }

    int duplicates() {
        return duplicates;
    }

    int resets() {
        return resets;
    }

    List<String> orphans() {
        return orphans;
    }

    /** The quota months the events named (the recovery from month records looks at them). */
    Set<QuotaMonth> months() {
        return months;
    }

    Set<Map.Entry<String, QuotaMonth>> drifted() {
        return drifted;
    }

    /** Writes one event to the database ledger; never throws for content problems (orphans). */
    void apply(UsageEvent e) {
        months.add(e.month());
        String db = LedgerClientIds.forSource(shard, e.incarnation(), e.clientId());
        switch (e.kind()) {
            case RESET -> {
                resets++;
                cover(db, e.sequence());
            }
            case DEDUCTION -> applyDeduction(e, db);
            case REFUND -> applyRefund(e, db);
        }
    }

    private void cover(String db, long sequence) {
        covered.computeIfAbsent(db, k -> new HashSet<>()).add(sequence);
    }

    private void applyDeduction(UsageEvent e, String db) {
        Deduction d = new Deduction(
                e.deductionId(),
                e.pid(),
                db,
                e.sequence(),
                e.amount(),
                e.month().value(),
                e.appendedAt());
        try {
            if (ledger.recordDeduction(d)) {
                recorded++;
            } else {
                duplicates++;
            }
        } catch (PidPoolException ex) {
            if (ex.code() != ErrorCode.CONFLICT) {
                throw ex;
            }
            Optional<DeductionBalance> stored = ledger.findDeduction(e.deductionId());
            if (stored.isPresent() && sameUsage(stored.get().deduction(), d)) {
                // recorded from the month records before its event was read: same usage, other numbering
                duplicates++;
                cover(db, e.sequence());
            } else {
                orphan(e, ex);
            }
        }
    }

    private void applyRefund(UsageEvent e, String db) {
        Refund r = new Refund(e.refundId(), e.deductionId(), db, e.sequence(), e.amount(), e.appendedAt());
        if (alreadyRefunded(r)) {
            duplicates++;
            return;
        }
        try {
            ledger.recordRefund(r);
            recorded++;
        } catch (PidPoolException ex) {
            if (ex.code() == ErrorCode.NOT_FOUND) {
                // the deduction's event was lost: take the deduction from the month record, then retry
                if (records.recoverDeduction(e.pid(), e.month(), e.deductionId())) {
                    ledger.recordRefund(r);
                    recorded++;
                    return;
                }
            } else if (ex.code() == ErrorCode.CONFLICT && alreadyRefunded(r)) {
                duplicates++;
                cover(db, e.sequence());
                return;
            }
            if (ex.code() == ErrorCode.UNAVAILABLE) {
                throw ex;
            }
            orphan(e, ex);
        }
    }

    private boolean alreadyRefunded(Refund r) {
        return ledger.refundsOf(r.deductionId()).stream()
                .anyMatch(x -> x.id().equals(r.id()) && x.amount() == r.amount());
    }

    private void orphan(UsageEvent e, PidPoolException ex) {
        String what = e.changeKey() + " (seq " + e.sequence() + " of " + e.clientId() + "): " + ex.getMessage();
        LOG.warn("usage shard {}: event not recorded: {}", shard, what);
        orphans.add(what);
        drifted.add(Map.entry(e.pid(), e.month()));
    }

    private static boolean sameUsage(Deduction a, Deduction b) {
        return a.pidId().equals(b.pidId())
                && a.amount() == b.amount()
                && a.month().equals(b.month());
    }
}
