/**
 * Benchmark mains (not run by {@code mvn verify}); see docs/benchmarks-zk.md for the commands.
 */
package io.pidpool.it.bench;
