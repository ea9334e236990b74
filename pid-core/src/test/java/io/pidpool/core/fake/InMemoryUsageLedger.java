package io.pidpool.core.fake;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.fake.InMemoryDatabase.ClientSequence;
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
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** {@link UsageLedger} over an {@link InMemoryDatabase}. Thread-safe. */
public final class InMemoryUsageLedger implements UsageLedger {
    private final InMemoryDatabase db;

    InMemoryUsageLedger(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public boolean recordDeduction(Deduction deduction) {
        Preconditions.requireNonNull(deduction, "deduction");
        return db.write(() -> {
            DeductionBalance stored = db.deductions.get(deduction.id());
            if (stored != null) {
                if (stored.deduction().equals(deduction)) {
                    return false;
                }
                throw PidPoolException.conflict(
                        "deductionId", "deduction %s was recorded with other content", deduction.id());
            }
            requireSequenceFree(deduction.clientId(), deduction.sequence());
            db.deductions.put(deduction.id(), new DeductionBalance(deduction, 0));
            markSequence(deduction.clientId(), deduction.sequence(), deduction.id());
            return true;
        });
    }

    @Override
    public RefundReceipt recordRefund(Refund refund) {
        Preconditions.requireNonNull(refund, "refund");
        return db.write(() -> {
            RefundReceipt first = db.refunds.get(refundKey(refund));
            if (first != null) {
                if (first.refund().equals(refund)) {
                    return first;
                }
                throw PidPoolException.conflict("refundId", "refund %s was recorded with other content", refund.id());
            }
            DeductionBalance balance = db.deductions.get(refund.deductionId());
            if (balance == null) {
                throw PidPoolException.notFound("deductionId", "deduction %s is not recorded", refund.deductionId());
            }
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
            requireSequenceFree(refund.clientId(), refund.sequence());
            db.deductions.put(refund.deductionId(), new DeductionBalance(balance.deduction(), total));
            RefundReceipt receipt = new RefundReceipt(refund, total, amount);
            db.refunds.put(refundKey(refund), receipt);
            markSequence(refund.clientId(), refund.sequence(), refund.id());
            return receipt;
        });
    }

    @Override
    public Optional<DeductionBalance> findDeduction(String deductionId) {
        Preconditions.requireNonNull(deductionId, "deductionId");
        return db.read(() -> db.deductions.find(deductionId));
    }

    @Override
    public List<Refund> refundsOf(String deductionId) {
        Preconditions.requireNonNull(deductionId, "deductionId");
        return db.read(() -> db.refunds.values().stream()
                .filter(r -> r.refund().deductionId().equals(deductionId))
                .sorted(Comparator.comparingLong(RefundReceipt::refundedTotal))
                .map(RefundReceipt::refund)
                .toList());
    }

    @Override
    public long netUsage(String pidId, YearMonth month) {
        Names.requirePidId(pidId, "pidId");
        Preconditions.requireNonNull(month, "month");
        return db.read(() -> db.deductions.values().stream()
                .filter(b -> b.deduction().pidId().equals(pidId)
                        && b.deduction().month().equals(month))
                .mapToLong(DeductionBalance::net)
                .sum());
    }

    @Override
    public Map<String, Long> netUsageByPid(YearMonth month) {
        Preconditions.requireNonNull(month, "month");
        return db.read(() -> {
            var sums = new TreeMap<String, Long>();
            for (DeductionBalance b : db.deductions.values()) {
                if (b.deduction().month().equals(month)) {
                    sums.merge(b.deduction().pidId(), b.net(), Long::sum);
                }
            }
            return java.util.Collections.unmodifiableMap(sums);
        });
    }

    @Override
    public Optional<SequenceProgress> progress(String clientId) {
        Names.requireToken(clientId, "clientId");
        return db.read(() -> db.clients.find(clientId));
    }

    @Override
    public List<Long> missingSequences(String clientId, long upTo, int limit) {
        Names.requireToken(clientId, "clientId");
        Preconditions.requireArgument(upTo >= 0, "upTo", "upTo must be >= 0, was %d", upTo);
        StorageLimits.requireLimit(limit);
        return db.read(() -> {
            SequenceProgress progress = db.clients.get(clientId);
            long next = progress == null ? 1 : progress.contiguousThrough() + 1;
            var missing = new ArrayList<Long>();
            // bounded: each step either collects a missing number or passes a stored one
            for (long s = next; s <= upTo && missing.size() < limit; s++) {
                if (!db.sequences.contains(new ClientSequence(clientId, s))) {
                    missing.add(s);
                }
            }
            return List.copyOf(missing);
        });
    }

    private void requireSequenceFree(String clientId, long sequence) {
        String used = db.sequences.get(new ClientSequence(clientId, sequence));
        if (used != null) {
            throw PidPoolException.conflict(
                    "sequence", "sequence %d of client %s was used by event %s", sequence, clientId, used);
        }
    }

    private void markSequence(String clientId, long sequence, String eventId) {
        db.sequences.put(new ClientSequence(clientId, sequence), eventId);
        SequenceProgress progress = db.clients.get(clientId);
        long contiguous = progress == null ? 0 : progress.contiguousThrough();
        long highest = Math.max(progress == null ? 0 : progress.highestSeen(), sequence);
        while (db.sequences.contains(new ClientSequence(clientId, contiguous + 1))) {
            contiguous++;
        }
        db.clients.put(clientId, new SequenceProgress(clientId, contiguous, highest));
    }

    /** A refund id is unique per deduction, as in the database and in Redis. */
    private static String refundKey(Refund refund) {
        return refund.deductionId() + "\n" + refund.id();
    }
}
