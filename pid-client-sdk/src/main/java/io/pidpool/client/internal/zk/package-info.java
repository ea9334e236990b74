/**
 * ZooKeeper access control shared by the SDK and the servers: {@link io.pidpool.client.internal.zk.ZkAuth}
 * (a digest identity, the ACL every node of a cluster's tree gets, and the Curator settings that go
 * with it).
 *
 * <p><b>Internal.</b> Not for applications: no compatibility is promised between releases. The server
 * and pid-worker share this code with the SDK (as a broker shares its clients' protocol code); an
 * application uses {@code io.pidpool.client} only.
 */
package io.pidpool.client.internal.zk;
