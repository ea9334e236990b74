package io.pidpool.server.advice;

import io.pidpool.core.advice.UsageReport;
import java.util.Optional;

/**
 * The seam between the usage scan and the advice: where the monitor gets the latest {@link
 * UsageReport} (per-PID and per-module usage projected to month end) to evaluate the alert rules and
 * the recommender on.
 *
 * <p><b>Merge note.</b> The leader's periodic full usage scan (branch {@code usage}) produces a
 * report per scan; connect it here, e.g. {@code () -> Optional.ofNullable(scan.lastReport())}, in
 * {@code PidServer} where {@link LedgerUsageReports} is built now. That interim implementation
 * computes a report on every call from the database and the Redis quota ledger.
 *
 * <p>Called from the alert service's thread and from HTTP threads; implementations are thread-safe
 * and may throw {@code UNAVAILABLE} (the caller skips that round).
 */
@FunctionalInterface
public interface UsageReports {
    /** The newest report, or empty while none is available yet. */
    Optional<UsageReport> latest();
}
