package io.pidpool.client;

import java.time.YearMonth;

/**
 * The right to send {@code commands} commands with PID {@code pid}: deducted atomically from its
 * quota of {@code month} in Redis under {@code deductionId}. Give unused commands back with {@link
 * PidClient#refund} and the {@code deductionId} (which alone identifies PID and month).
 *
 * @param pid the PID to send the commands with; held by this client when the permit was granted
 * @param deductionId the id of the deduction, {@code <yyyyMM>-<shard>-<snowflake>}
 * @param month the quota month the commands were deducted from
 * @param commands how many commands were deducted
 */
public record Permit(String pid, String deductionId, YearMonth month, int commands) {}
