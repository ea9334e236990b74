package io.pidpool.server.config;

import java.util.List;

/**
 * Secrets of the cluster.
 *
 * @param secretKey a base64 AES key (16 or 32 bytes) that seals PID passwords at rest and in
 *     ZooKeeper; every server and SDK of a cluster shares it
 * @param tokens the bearer tokens of the operator API with their roles
 */
public record SecurityConfig(String secretKey, List<TokenConfig> tokens) {
    public SecurityConfig {
        tokens = tokens == null ? List.of() : java.util.Collections.unmodifiableList(new java.util.ArrayList<>(tokens));
    }

    @Override
    public String toString() {
        return "SecurityConfig[secretKey=***, tokens=" + tokens + "]";
    }
}
