package io.pidpool.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.PidPoolException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What standalone decides before it starts anything (no network). */
class StandaloneServerTest {
    @TempDir
    Path dir;

    @Test
    void secretKeyIsCreatedOwnerOnlyAndKeptAcrossRestarts() throws Exception {
        Path file = dir.resolve("secret.key");
        String first = StandaloneServer.secretKey(file);
        assertThat(Base64.getDecoder().decode(first)).hasSize(32);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
        assertThat(StandaloneServer.secretKey(file)).isEqualTo(first);
    }

    @Test
    void aDamagedSecretKeyIsAnErrorNotAReplacement() throws Exception {
        Path file = Files.writeString(dir.resolve("secret.key"), "not a key\n");
        assertThatThrownBy(() -> StandaloneServer.secretKey(file))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining(file.toString());
        assertThat(Files.readString(file)).isEqualTo("not a key\n");
    }

    @Test
    void generatesAnAdminTokenUnlessGiven() {
        StandaloneServer generated = new StandaloneServer(new StandaloneServer.Options(0, 0, 0, dir, null));
        assertThat(generated.adminTokenGenerated()).isTrue();
        assertThat(generated.adminToken()).hasSizeGreaterThanOrEqualTo(32).doesNotContainAnyWhitespaces();
        assertThat(new StandaloneServer(new StandaloneServer.Options(0, 0, 0, dir, null)).adminToken())
                .isNotEqualTo(generated.adminToken());

        StandaloneServer given =
                new StandaloneServer(new StandaloneServer.Options(0, 0, 0, dir, "my-admin-token-123456"));
        assertThat(given.adminTokenGenerated()).isFalse();
        assertThat(given.adminToken()).isEqualTo("my-admin-token-123456");
    }

    @Test
    void badOptionsNameTheOption() {
        assertThatThrownBy(() -> new StandaloneServer(new StandaloneServer.Options(70000, 0, 0, dir, null)))
                .hasMessageContaining("--http-port")
                .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo("--http-port"));
        assertThatThrownBy(() -> new StandaloneServer(new StandaloneServer.Options(0, -1, 0, dir, null)))
                .hasMessageContaining("--zk-port");
        assertThatThrownBy(() -> new StandaloneServer(new StandaloneServer.Options(0, 0, 65536, dir, null)))
                .hasMessageContaining("--redis-port");
        assertThatThrownBy(() -> new StandaloneServer(new StandaloneServer.Options(0, 0, 0, dir, "short")))
                .hasMessageContaining("--admin-token");
    }
}
