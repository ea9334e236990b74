/**
 * In-memory fakes of the core ports ({@code InMemory*}), shared with the other modules through the
 * test-jar. They behave like the real adapters (same errors, same atomicity); the {@code *Contract}
 * suites in {@code io.pidpool.core.contract} prove it by running against both.
 */
package io.pidpool.core.fake;
