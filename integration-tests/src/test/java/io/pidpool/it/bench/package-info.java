/**
 * Benchmark harnesses (not run by {@code mvn verify}): the JMH planner benchmark, the allocation
 * benchmark with the real leader, and the ZooKeeper create baseline. Commands and results:
 * docs/benchmarks.md and docs/benchmarks-zk.md.
 */
package io.pidpool.it.bench;
