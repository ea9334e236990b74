/**
 * Quota rules, pure: the monthly window ({@link io.pidpool.core.quota.MonthlyWindow}, {@link
 * io.pidpool.core.quota.QuotaMonth}), tiered overage pricing ({@link io.pidpool.core.quota.OverageTariff}),
 * month-end projection ({@link io.pidpool.core.quota.UsageProjection}) and the per-PID, per-month
 * deduct/refund state machine ({@link io.pidpool.core.quota.MonthLedger}) with the four refund
 * rules. The {@link io.pidpool.core.port.QuotaLedger} port makes the state machine atomic across
 * processes (Redis) and returns its result records.
 */
package io.pidpool.core.quota;
