package io.pidpool.client;

/**
 * The right to send {@code commands} commands with PID {@code pid}, deducted atomically from its
 * monthly quota. Give unused commands back with {@link PidClient#refund} and the {@code
 * deductionId}.
 */
public record Permit(String pid, String deductionId, long commands) {}
