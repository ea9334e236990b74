/**
 * The ZooKeeper protocol between the leader and the SDK: the layout of docs/design.md §4 and the binary
 * formats of the nodes. Both sides use these classes, so they cannot drift apart.
 */
package io.pidpool.core.protocol;
