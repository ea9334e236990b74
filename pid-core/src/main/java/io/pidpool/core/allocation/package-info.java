/**
 * The allocation planner: a pure function from the leader's view (database + ZooKeeper + its own
 * carried state + the time) to an ordered plan of DELETING/ADDING instructions that keeps every
 * PID held by at most one instance, balances modules with minimal movement, reserves vacant slots'
 * shares for replacements, and throttles and brakes redistribution. Entry point:
 * {@link io.pidpool.core.allocation.AllocationPlanner}; the algorithm is described in
 * {@code docs/planner.md}.
 *
 * <p>Concurrency: every public type here is an immutable value (collections are copied on
 * construction), and the planner keeps no state between calls, so all of it may be shared freely
 * between threads.
 */
package io.pidpool.core.allocation;
