/**
 * The allocation planner: a pure function from the leader's view (database + ZooKeeper + its own
 * carried state + the time) to an ordered plan of DELETING/ADDING instructions that keeps every
 * PID held by at most one instance, balances modules with minimal movement, reserves vacant slots'
 * shares for replacements, and throttles and brakes redistribution. Entry point:
 * {@link io.pidpool.core.allocation.AllocationPlanner}.
 */
package io.pidpool.core.allocation;
