package io.pidpool.client.internal.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.List;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;

class ZkAuthTest {
    @Test
    void digestGivesOneAclEntryForTheIdentityInsideTheNamespace() throws Exception {
        ZkAuth auth = ZkAuth.digest("pidpool:s3cret");
        ACL expected = new ACL(
                ZooDefs.Perms.ALL, new Id("digest", DigestAuthenticationProvider.generateDigest("pidpool:s3cret")));
        assertThat(auth.enabled()).isTrue();
        assertThat(auth.user()).isEqualTo("pidpool");
        assertThat(auth.acl()).containsExactly(expected);
        var provider = auth.aclProvider("pidpool/blue");
        assertThat(provider.getAclForPath("/pidpool/blue")).containsExactly(expected);
        assertThat(provider.getAclForPath("/pidpool/blue/modules/a#b#c/x")).containsExactly(expected);
        assertThat(provider.getAclForPath("/pidpool"))
                .containsExactlyInAnyOrder(
                        expected, new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        assertThat(provider.getAclForPath("/pidpool/blueberry"))
                .doesNotContain(new ACL(ZooDefs.Perms.ALL, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        // ZooKeeper's validateACL asks contains(null): immutable JDK lists would throw
        assertThat(auth.acl().contains(null)).isFalse();
        assertThat(provider.getAclForPath("/pidpool").contains(null)).isFalse();
        assertThat(auth.toString()).contains("pidpool").doesNotContain("s3cret");
    }

    @Test
    void noneKeepsTheOpenAclAndBlankMeansNone() {
        assertThat(ZkAuth.none().enabled()).isFalse();
        assertThat(ZkAuth.none().acl()).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
        assertThat(ZkAuth.of("  ").enabled()).isFalse();
        assertThat(ZkAuth.of(null).enabled()).isFalse();
        assertThat(ZkAuth.none().aclProvider("pidpool/x").getAclForPath("/pidpool"))
                .isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
    }

    @Test
    void malformedIdentitiesAreRejectedWithoutEchoingThem() {
        for (String bad : List.of("nocolon-secretvalue", ":secretvalue", "user:", "us er:secretvalue")) {
            assertThatThrownBy(() -> ZkAuth.digest(bad)).isInstanceOfSatisfying(PidPoolException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                assertThat(e.field()).isEqualTo("zookeeper.auth");
                assertThat(e.getMessage()).doesNotContain("secretvalue");
            });
        }
    }
}
