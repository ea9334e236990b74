package io.pidpool.worker.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.client.zk.ZkAuth;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.List;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;

/** {@link ZooKeeperAuth} is a copy of the SDK's {@link ZkAuth}: both must give the same ACLs and reject the same values. */
class ZooKeeperAuthTest {
    private static final List<String> PATHS = List.of(
            "/pidpool",
            "/pidpool/blue",
            "/pidpool/blue/workers",
            "/pidpool/blue/workers/default/w-1",
            "/pidpool/bluer");

    @Test
    void theSameAclAsTheServersInsideAndAboveTheNamespace() {
        for (String value : List.of("pidpool:s3cret", "  pidpool:with:colons  ", "u:p")) {
            ZooKeeperAuth mine = ZooKeeperAuth.of(value);
            ZkAuth servers = ZkAuth.of(value);
            assertThat(mine.enabled()).isTrue();
            assertThat(mine.user()).isEqualTo(servers.user());
            assertThat(mine.acl()).isEqualTo(servers.acl()).hasSize(1);
            assertThat(mine.acl().get(0).getPerms()).isEqualTo(ZooDefs.Perms.ALL);
            var mineProvider = mine.aclProvider("pidpool/blue");
            var serversProvider = servers.aclProvider("pidpool/blue");
            assertThat(mineProvider.getDefaultAcl()).isEqualTo(serversProvider.getDefaultAcl());
            for (String path : PATHS) {
                assertThat(mineProvider.getAclForPath(path)).as(path).isEqualTo(serversProvider.getAclForPath(path));
            }
            assertThat(mine.acl().contains(null)).isFalse(); // ZooKeeper's validateACL asks this
        }
    }

    @Test
    void blankIsNoneWithTheOpenAcl() {
        for (String blank : new String[] {null, "", "   "}) {
            assertThat(ZooKeeperAuth.of(blank).enabled()).isFalse();
            assertThat(ZooKeeperAuth.of(blank).acl()).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
        }
        assertThat(ZooKeeperAuth.none().toString()).isEqualTo("none");
    }

    @Test
    void malformedValuesAreRejectedLikeTheServersDoWithoutEchoingThem() {
        for (String bad :
                List.of("nocolon-secretvalue", ":secretvalue", "user:", "us er:secretvalue", "u\t:secretvalue")) {
            assertThatThrownBy(() -> ZkAuth.of(bad)).isInstanceOf(PidPoolException.class);
            assertThatThrownBy(() -> ZooKeeperAuth.of(bad)).isInstanceOfSatisfying(PidPoolException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                assertThat(e.field()).isEqualTo("zookeeper.auth");
                assertThat(e.getMessage())
                        .contains("user:password")
                        .contains("PIDPOOL_ZOOKEEPER_AUTH")
                        .doesNotContain("secretvalue");
            });
        }
    }

    @Test
    void toStringShowsTheUserNeverThePassword() {
        ZooKeeperAuth auth = ZooKeeperAuth.of("pidpool:hunter2-secret");
        assertThat(auth.toString()).isEqualTo("digest user pidpool").doesNotContain("hunter2");
    }
}
