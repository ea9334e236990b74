/**
 * ZooKeeper code shared by the SDK and the servers: {@link io.pidpool.client.internal.zk.ZkAuth}
 * (a digest identity, the ACL every node of a cluster's tree gets, and the Curator settings that go
 * with it), {@link io.pidpool.client.internal.zk.ZkSessions} (session settings) and the {@link
 * io.pidpool.client.internal.zk.TreeFollower} recipe (a tree followed with one persistent watch, read
 * only where its owner does not already know it), behind a port the protocol simulation fakes.
 *
 * <p><b>Internal.</b> Not for applications: no compatibility is promised between releases. The server
 * and pid-worker share this code with the SDK (as a broker shares its clients' protocol code); an
 * application uses {@code io.pidpool.client} only.
 */
package io.pidpool.client.internal.zk;
