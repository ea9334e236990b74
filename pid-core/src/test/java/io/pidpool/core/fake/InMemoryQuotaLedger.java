package io.pidpool.core.fake;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.QuotaLedger;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.QuotaUsage;
import io.pidpool.core.quota.RefundResult;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link QuotaLedger} in memory: the {@link MonthLedger} state machine, one per PID and month.
 *
 * <p>Concurrency: one {@code Book} per PID, created once in a {@link ConcurrentHashMap}; every
 * operation on a PID holds that book's monitor around decide + replay, so operations on one PID are
 * serial (as one Lua script is in Redis) and different PIDs do not contend. Fenced limit writes are
 * serialised by one more lock, around the book's.
 */
public final class InMemoryQuotaLedger implements QuotaLedger {
    private static final class Book {
        // guarded by this
        long limit;
        final Map<QuotaMonth, MonthLedger> months = new HashMap<>();

        MonthLedger month(String pid, QuotaMonth month) {
            return months.computeIfAbsent(month, m -> new MonthLedger(pid, m));
        }
    }

    private final Map<String, Book> books = new ConcurrentHashMap<>();
    /** Guards {@link #leaderEpoch}; taken before a book's monitor, never inside one. */
    private final Object leaderLock = new Object();
    /** The highest leader epoch a fenced limit write or {@link #fenceLimits} carried. */
    private Epoch leaderEpoch = Epoch.NONE;

    private Book book(String pid) {
        Names.requirePidId(pid, "pid");
        return books.computeIfAbsent(pid, p -> new Book());
    }

    @Override
    public DeductResult tryDeduct(String pid, QuotaMonth month, long amount, String deductionId) {
        requireNonNull(month, "month");
        Book book = book(pid);
        synchronized (book) {
            return book.month(pid, month).deduct(deductionId, amount, book.limit);
        }
    }

    @Override
    public RefundResult refund(String pid, QuotaMonth month, String deductionId, String refundId, long amount) {
        requireNonNull(month, "month");
        Book book = book(pid);
        synchronized (book) {
            return book.month(pid, month).refund(deductionId, refundId, amount);
        }
    }

    @Override
    public QuotaUsage usage(String pid, QuotaMonth month) {
        requireNonNull(month, "month");
        Book book = book(pid);
        synchronized (book) {
            MonthLedger ledger = book.months.get(month);
            return new QuotaUsage(pid, month, ledger == null ? 0 : ledger.used(), book.limit);
        }
    }

    @Override
    public void setLimit(String pid, long hardLimit) {
        MonthLedger.requireLimit(hardLimit);
        Book book = book(pid);
        synchronized (book) {
            book.limit = hardLimit;
        }
    }

    /** Fenced by one leader epoch for all PIDs (stricter than Redis' one per shard, which the contract allows). */
    @Override
    public void setLimit(String pid, long hardLimit, Epoch leaderEpoch) {
        Names.requirePidId(pid, "pid");
        MonthLedger.requireLimit(hardLimit);
        requireNonNull(leaderEpoch, "epoch");
        synchronized (leaderLock) {
            raise(leaderEpoch);
            setLimit(pid, hardLimit);
        }
    }

    @Override
    public void fenceLimits(Epoch leaderEpoch) {
        requireNonNull(leaderEpoch, "epoch");
        synchronized (leaderLock) {
            raise(leaderEpoch);
        }
    }

    private void raise(Epoch leaderEpoch) {
        if (leaderEpoch.isOlderThan(this.leaderEpoch)) {
            throw new PidPoolException(
                    ErrorCode.FENCED,
                    "epoch",
                    String.format(
                            "quota limit refused: leader epoch %d was seen, this write carries epoch %d",
                            this.leaderEpoch.value(), leaderEpoch.value()));
        }
        this.leaderEpoch = leaderEpoch;
    }

    @Override
    public void reset(String pid, QuotaMonth month) {
        requireNonNull(month, "month");
        Book book = book(pid);
        synchronized (book) {
            MonthLedger ledger = book.months.get(month);
            if (ledger != null) {
                ledger.reset();
            }
        }
    }

    /** The month ledger's state, for tests. */
    public MonthLedger.Snapshot snapshot(String pid, QuotaMonth month) {
        Book book = book(pid);
        synchronized (book) {
            return book.month(pid, month).snapshot();
        }
    }
}
