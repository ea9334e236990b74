package io.pidpool.server.config;

/**
 * The ZooKeeper ensemble.
 *
 * @param connect the connect string, e.g. {@code zk1:2181,zk2:2181,zk3:2181}
 * @param sessionTimeoutMs the requested session timeout; the server may negotiate another one, so
 *     code that derives grace periods reads the negotiated value back
 * @param connectionTimeoutMs how long start-up waits for the first connection
 */
public record ZooKeeperConfig(String connect, int sessionTimeoutMs, int connectionTimeoutMs) {}
