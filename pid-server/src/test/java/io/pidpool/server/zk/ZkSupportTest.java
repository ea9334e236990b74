package io.pidpool.server.zk;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.Test;

class ZkSupportTest {
    private static final String SOCKET = ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET;

    @Test
    void aMemberConnectsOnNettyByDefault() {
        assertThat(ZkSupport.memberClientConfig().getProperty(SOCKET))
                .isEqualTo("org.apache.zookeeper.ClientCnxnSocketNetty");
    }

    @Test
    void aSocketTheJvmNamesIsKeptAndOtherPropertiesStillCount() {
        String socket = System.getProperty(SOCKET);
        String secure = System.getProperty(ZKClientConfig.SECURE_CLIENT);
        System.setProperty(SOCKET, "org.apache.zookeeper.ClientCnxnSocketNIO");
        System.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        try {
            ZKClientConfig config = ZkSupport.memberClientConfig();
            assertThat(config.getProperty(SOCKET)).isEqualTo("org.apache.zookeeper.ClientCnxnSocketNIO");
            assertThat(config.getBoolean(ZKClientConfig.SECURE_CLIENT)).isTrue();
        } finally {
            restore(SOCKET, socket);
            restore(ZKClientConfig.SECURE_CLIENT, secure);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }
}
