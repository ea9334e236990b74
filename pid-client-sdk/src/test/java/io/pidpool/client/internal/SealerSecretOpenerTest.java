package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.secret.SecretSealer;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The SDK's AES-GCM opener is core's {@link SecretSealer}, and it never shows a key. */
class SealerSecretOpenerTest {
    private static final String KEY_1 = Base64.getEncoder().encodeToString(new byte[32]);
    private static final String KEY_2 = Base64.getEncoder().encodeToString("0123456789abcdef".getBytes());

    @Test
    void opensWhatTheServersKeyringSealedUnderAnyOfItsKeys() {
        SecretSealer server1 = SecretSealer.fromConfig("k1", Map.of("k1", KEY_1));
        SecretSealer server2 = SecretSealer.fromConfig("k2", Map.of("k1", KEY_1, "k2", KEY_2));
        SealerSecretOpener opener =
                new SealerSecretOpener(SecretSealer.fromConfig("k2", Map.of("k1", KEY_1, "k2", KEY_2)));

        assertThat(open(opener, server1.seal("pässwörd-1"))).isEqualTo("pässwörd-1");
        assertThat(open(opener, server2.seal("pw-2"))).isEqualTo("pw-2");
        assertThat(opener.toString()).contains("k1", "k2").doesNotContain(KEY_1, KEY_2);
    }

    @Test
    void aWrongKeyOrAnUnknownKeyIdIsRefusedWithoutKeyMaterialInTheMessage() {
        SealedSecret underOtherKey =
                SecretSealer.fromConfig("k1", Map.of("k1", KEY_2)).seal("hunter2");
        SealedSecret underUnknownId =
                SecretSealer.fromConfig("k9", Map.of("k9", KEY_1)).seal("hunter2");
        SealerSecretOpener opener = new SealerSecretOpener(SecretSealer.fromConfig("k1", Map.of("k1", KEY_1)));

        assertThatThrownBy(() -> open(opener, underOtherKey))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("failed authentication under key 'k1'")
                .hasMessageNotContaining("hunter2")
                .hasMessageNotContaining(KEY_1)
                .hasMessageNotContaining(KEY_2);
        assertThatThrownBy(() -> open(opener, underUnknownId))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND))
                .hasMessageContaining("no key 'k9'");
    }

    private static String open(SealerSecretOpener opener, SealedSecret sealed) {
        return opener.open(sealed.keyId(), sealed.sealed());
    }
}
