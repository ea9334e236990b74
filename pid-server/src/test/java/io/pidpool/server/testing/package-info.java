/**
 * Test support for the server's integration tests: a loopback ZooKeeper, an in-memory store, a
 * simulated SDK instance that plays the client side of the leader protocol, and a recording fake of
 * the third-party platform that fails a test on any double login.
 */
package io.pidpool.server.testing;
