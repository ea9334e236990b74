/**
 * The quick start kept honest: the {@code examples/} project (a business server using the SDK, and
 * the operator's curl script) run against a {@code standalone} server ({@link
 * io.pidpool.it.examples.QuickstartExampleIT}).
 */
package io.pidpool.it.examples;
