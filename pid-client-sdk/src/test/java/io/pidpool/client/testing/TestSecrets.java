package io.pidpool.client.testing;

import io.pidpool.client.SecretOpener;
import io.pidpool.core.model.SealedSecret;
import java.nio.charset.StandardCharsets;

/**
 * A trivial stand-in for AES-GCM sealing: the "sealed" bytes are the UTF-8 password reversed under
 * key id {@code test}. Only for tests: it hides nothing.
 */
public final class TestSecrets {
    public static final String KEY_ID = "test";

    private TestSecrets() {}

    public static SealedSecret seal(String password) {
        byte[] bytes = password.getBytes(StandardCharsets.UTF_8);
        byte[] reversed = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            reversed[i] = bytes[bytes.length - 1 - i];
        }
        return new SealedSecret(KEY_ID, reversed);
    }

    /** Opens what {@link #seal} sealed; refuses any other key id. */
    public static SecretOpener opener() {
        return (keyId, bytes) -> {
            if (!KEY_ID.equals(keyId)) {
                throw new IllegalArgumentException("unknown key id " + keyId);
            }
            byte[] plain = new byte[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                plain[i] = bytes[bytes.length - 1 - i];
            }
            return new String(plain, StandardCharsets.UTF_8);
        };
    }
}
