/**
 * Fault scenarios (docs/design.md §2 promise 1, §6): client JVMs killed, frozen and partitioned, sessions
 * expired by the server, ZooKeeper servers killed, all checked by the recording platform. See
 * docs/fault-tests.md.
 */
package io.pidpool.it.fault;
