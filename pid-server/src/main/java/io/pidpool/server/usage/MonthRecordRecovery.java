package io.pidpool.server.usage;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Deduction;
import io.pidpool.core.port.DeductionBalance;
import io.pidpool.core.port.Refund;
import io.pidpool.core.port.SequenceProgress;
import io.pidpool.core.port.UsageLedger;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Clock;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongConsumer;
import org.redisson.api.RMap;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ledger's second source: the month hashes in Redis ({@code d:<id>}, {@code r:<id>} of a
 * PID-month). When events are gone from the stream, or the ledger refused one, what a hash holds and
 * the ledger lacks is written under the shard's recovery client ({@link LedgerClientIds#recovery}),
 * so the usage is not lost although its sequence numbers are; a PID-month can then be compared side
 * by side, deduction by deduction.
 *
 * <p>One instance per sync pass over one shard: it counts what it recovered for the pass's report.
 */
final class MonthRecordRecovery {
    // the sync's category: operators follow one logger for everything a pass did
    private static final Logger LOG = LoggerFactory.getLogger(UsageLedgerSync.class);

    private final RedissonClient redisson;
    private final QuotaKeys keys;
    private final UsageLedger ledger;
    private final Clock clock;
    private final int shard;
    private int recovered;

    MonthRecordRecovery(RedissonClient redisson, QuotaKeys keys, UsageLedger ledger, Clock clock, int shard) {
        this.redisson = redisson;
        this.keys = keys;
        this.ledger = ledger;
        this.clock = clock;
        this.shard = shard;
    }

    /** Deductions and refunds this pass wrote from the month records. */
    int recovered() {
        return recovered;
    }

    /**
     * What the shard's month hashes hold and the database lacks: every PID of the shard and of the
     * months' deduction indexes, in {@code months} plus the current and the previous month.
     */
    void recoverShard(Set<QuotaMonth> months) {
        Set<QuotaMonth> scan = new HashSet<>(months);
        YearMonth now = YearMonth.now(clock.withZone(ZoneOffset.UTC));
        scan.add(new QuotaMonth(now));
        scan.add(new QuotaMonth(now.minusMonths(1)));
        Set<String> pids = new HashSet<>(redisson.<String, String>getMap(keys.pids(shard), StringCodec.INSTANCE)
                .keySet(1_000));
        for (QuotaMonth month : scan) {
            Set<String> monthPids = new HashSet<>(pids);
            monthPids.addAll(redisson.<String, String>getMap(keys.deductionIndex(shard, month), StringCodec.INSTANCE)
                    .values(1_000));
            for (String pid : monthPids) {
                recoverMonth(pid, month);
            }
        }
    }

    /**
     * An event the ledger refused leaves the ledger behind Redis: catch up from the month records
     * of every PID-month concerned, then compare them deduction by deduction; returns one line per
     * PID-month that still differs (for {@link SyncReport#stillDrifting()}).
     */
    List<String> catchUp(Collection<Map.Entry<String, QuotaMonth>> drifted) {
        List<String> stillDrifting = new ArrayList<>();
        for (Map.Entry<String, QuotaMonth> pm : drifted) {
            try {
                recoverMonth(pm.getKey(), pm.getValue());
            } catch (PidPoolException ex) {
                if (ex.code() == ErrorCode.UNAVAILABLE) {
                    throw ex;
                }
                LOG.warn(
                        "usage shard {}: could not catch up {} in {} from Redis: {}",
                        shard,
                        pm.getKey(),
                        pm.getValue(),
                        ex.getMessage());
            }
            Optional<String> difference = difference(pm.getKey(), pm.getValue());
            difference.ifPresent(d -> {
                LOG.error(
                        "usage shard {}: the ledger still differs from Redis for {} in {}: {}",
                        shard,
                        pm.getKey(),
                        pm.getValue(),
                        d);
                stillDrifting.add(pm.getKey() + " " + pm.getValue() + ": " + d);
            });
        }
        return stillDrifting;
    }

    /**
     * Writes deduction {@code did} from its month record when the record is there (the refund of a
     * deduction whose event was lost); false when Redis has no record of it either.
     */
    boolean recoverDeduction(String pid, QuotaMonth month, String did) {
        String v = redisson.<String, String>getMap(keys.usage(pid, month), StringCodec.INSTANCE)
                .get("d:" + did);
        if (v == null) {
            return false;
        }
        if (recordRecovered(pid, month, did, v)) {
            recovered++;
        }
        return true;
    }

    /** The first deduction whose amount or refunded total differs between Redis and the ledger. */
    private Optional<String> difference(String pid, QuotaMonth month) {
        RMap<String, String> hash = redisson.getMap(keys.usage(pid, month), StringCodec.INSTANCE);
        for (Map.Entry<String, String> f : hash.entrySet(1_000)) {
            if (!f.getKey().startsWith("d:")) {
                continue;
            }
            String did = f.getKey().substring(2);
            String[] v = f.getValue().split("\\|");
            long amount = Long.parseLong(v[0]);
            long refunded = Long.parseLong(v[3]);
            Optional<DeductionBalance> stored = ledger.findDeduction(did);
            if (stored.isEmpty()) {
                return Optional.of("deduction " + did + " is not in the ledger");
            }
            DeductionBalance b = stored.get();
            if (!b.deduction().pidId().equals(pid)
                    || b.deduction().amount() != amount
                    || b.refundedTotal() != refunded) {
                return Optional.of("deduction " + did + ": Redis " + amount + " refunded " + refunded
                        + ", ledger " + b.deduction().pidId() + " "
                        + b.deduction().amount() + " refunded "
                        + b.refundedTotal());
            }
        }
        return Optional.empty();
    }

    private void recoverMonth(String pid, QuotaMonth month) {
        RMap<String, String> hash = redisson.getMap(keys.usage(pid, month), StringCodec.INSTANCE);
        Map<String, String> refunds = new HashMap<>();
        for (Map.Entry<String, String> f : hash.entrySet(1_000)) {
            if (f.getKey().startsWith("d:")) {
                String did = f.getKey().substring(2);
                if (ledger.findDeduction(did).isEmpty() && recordRecovered(pid, month, did, f.getValue())) {
                    recovered++;
                }
            } else if (f.getKey().startsWith("r:")) {
                refunds.put(f.getKey().substring(2), f.getValue());
            }
        }
        for (Map.Entry<String, String> r : refunds.entrySet()) {
            String[] v = r.getValue().split("\\|");
            String did = v[0];
            long amount = Long.parseLong(v[1]);
            // r:<deductionId>:<refundId>, or r:<refundId> when written before refund ids were
            // scoped to their deduction (ids never contain ':')
            String field = r.getKey();
            String rid = field.startsWith(did + ":") ? field.substring(did.length() + 1) : field;
            boolean known = ledger.refundsOf(did).stream().anyMatch(x -> x.id().equals(rid));
            if (known || ledger.findDeduction(did).isEmpty()) {
                continue;
            }
            recordWithNextSequence(seq -> ledger.recordRefund(
                    new Refund(rid, did, LedgerClientIds.recovery(shard), seq, amount, clock.instant())));
            recovered++;
        }
    }

    /** {@code v} = "amount|usedAfter|limit|refunded"; the refunds are recovered separately. */
    private boolean recordRecovered(String pid, QuotaMonth month, String did, String v) {
        long amount = Long.parseLong(v.substring(0, v.indexOf('|')));
        Instant at = clock.instant();
        try {
            recordWithNextSequence(seq -> ledger.recordDeduction(
                    new Deduction(did, pid, LedgerClientIds.recovery(shard), seq, amount, month.value(), at)));
            LOG.warn(
                    "usage shard {}: deduction {} of {} in {} recovered from the month record", shard, did, pid, month);
            return true;
        } catch (PidPoolException ex) {
            if (ex.code() == ErrorCode.CONFLICT && ledger.findDeduction(did).isPresent()) {
                return false; // recorded meanwhile
            }
            throw ex;
        }
    }

    private void recordWithNextSequence(LongConsumer write) {
        String client = LedgerClientIds.recovery(shard);
        for (int attempt = 0; ; attempt++) {
            long next =
                    ledger.progress(client).map(SequenceProgress::highestSeen).orElse(0L) + 1;
            try {
                write.accept(next);
                return;
            } catch (PidPoolException ex) {
                // another process took the number: take the next one (bounded)
                if (ex.code() != ErrorCode.CONFLICT || !"sequence".equals(ex.field()) || attempt >= 5) {
                    throw ex;
                }
            }
        }
    }
}
