/**
 * ZooKeeper access control shared by the SDK and the servers: {@link io.pidpool.client.zk.ZkAuth}
 * (a digest identity, the ACL every node of a cluster's tree gets, and the Curator settings that go
 * with it).
 */
package io.pidpool.client.zk;
