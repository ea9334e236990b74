package io.pidpool.core.fake;

import static io.pidpool.core.error.Preconditions.requireNonNull;

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
 * serial (as one Lua script is in Redis) and different PIDs do not contend.
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
