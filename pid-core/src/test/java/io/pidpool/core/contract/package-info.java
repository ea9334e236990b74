/**
 * Abstract {@code *Contract} suites, one per port: written once, run against the in-memory fakes
 * (unit tests in pid-core) and against the real adapters on every database (ITs in pid-server).
 * A subclass supplies fresh, empty repositories for each test.
 */
package io.pidpool.core.contract;
