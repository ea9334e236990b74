/**
 * Monitoring and advice, pure: month-end projections of every PID's and module's usage and
 * overage cost ({@link io.pidpool.core.advice.UsageProjector} over a {@link
 * io.pidpool.core.advice.UsageSnapshot}), recommendations of PID moves between modules that lower
 * the total projected overage cost ({@link io.pidpool.core.advice.Recommender}), and alert rules
 * with de-duplication against the open alerts ({@link io.pidpool.core.advice.AlertRules}).
 *
 * <p>No I/O and no clock reads: the leader gathers a snapshot (database, Redis usage, ZooKeeper
 * instance counts, the planner's signals) and passes the time in. The projection model, the cost
 * arithmetic, the greedy algorithm and the alert rules are described in {@code docs/advice.md}.
 *
 * <p>Concurrency: every public type here is an immutable value or a stateless service holding only
 * its immutable policy, so all of it may be shared freely between threads.
 */
package io.pidpool.core.advice;
