package io.pidpool.server.config;

/**
 * The ZooKeeper ensemble.
 *
 * @param connect the connect string, e.g. {@code zk1:2181,zk2:2181,zk3:2181}
 * @param sessionTimeoutMs the requested session timeout; the server may negotiate another one, so
 *     code that derives grace periods reads the negotiated value back
 * @param connectionTimeoutMs how long start-up waits for the first connection
 * @param auth digest authentication {@code user:password}, empty for none: every session
 *     authenticates with it and every node of the cluster's tree gets the ACL {@code
 *     digest:user:<hash>} (all). The SDKs of the cluster must use the same identity
 *     ({@code PidClient.Builder.zookeeperAuth}). Never logged.
 */
public record ZooKeeperConfig(String connect, int sessionTimeoutMs, int connectionTimeoutMs, String auth) {
    public ZooKeeperConfig {
        auth = auth == null ? "" : auth;
    }

    /** Without authentication. */
    public ZooKeeperConfig(String connect, int sessionTimeoutMs, int connectionTimeoutMs) {
        this(connect, sessionTimeoutMs, connectionTimeoutMs, "");
    }

    @Override
    public String toString() {
        return "ZooKeeperConfig[connect=" + connect + ", sessionTimeoutMs=" + sessionTimeoutMs
                + ", connectionTimeoutMs=" + connectionTimeoutMs + ", auth="
                + (auth.isBlank() ? "(none)" : "***") + "]";
    }
}
