package io.pidpool.client.internal;

import io.pidpool.client.SecretOpener;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.secret.SecretSealer;

/**
 * The {@link SecretOpener} behind {@code PidClient.Builder.secretKeys/secretKey}: core's AES-GCM
 * {@link SecretSealer#open}. Its {@link #toString()} names the key ids only, never a key. Public only
 * because the builder lives in another package; not an API.
 *
 * <p>Thread-safe (the sealer is immutable).
 */
public final class SealerSecretOpener implements SecretOpener {
    private final SecretSealer sealer;

    public SealerSecretOpener(SecretSealer sealer) {
        this.sealer = sealer;
    }

    @Override
    public String open(String keyId, byte[] ciphertext) {
        return sealer.open(new SealedSecret(keyId, ciphertext));
    }

    @Override
    public String toString() {
        return "SealerSecretOpener[keyIds=" + sealer.keyIds() + "]";
    }
}
