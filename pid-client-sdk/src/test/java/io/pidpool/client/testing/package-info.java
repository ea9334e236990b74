/**
 * Reusable test support for the SDK and the integration tests (published in the module's test-jar):
 * a loopback {@link io.pidpool.client.testing.BlackHoleProxy} to partition a client from ZooKeeper
 * or delay its traffic,
 * a {@link io.pidpool.client.testing.FakeLeader} that plays the leader's side of docs/design.md §4 with
 * plain Curator, a loopback {@link io.pidpool.client.testing.TestZooKeeper}, a {@link
 * io.pidpool.client.testing.RecordingListener} and trivial {@link io.pidpool.client.testing.TestSecrets}.
 */
package io.pidpool.client.testing;
