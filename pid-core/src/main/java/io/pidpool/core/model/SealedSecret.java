package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.util.Arrays;
import java.util.Base64;

/**
 * An account password encrypted with AES-GCM: the id of the key that sealed it and
 * {@code iv || ciphertext || tag}. Only this form is stored or written to ZooKeeper; the plain text
 * exists only inside the SDK of a client that holds the key.
 */
public record SealedSecret(String keyId, byte[] sealed) {
    public SealedSecret {
        Names.requireToken(keyId, "secret.keyId");
        requireArgument(sealed != null && sealed.length > 0, "secret", "sealed secret is empty");
        sealed = sealed.clone();
    }

    @Override
    public byte[] sealed() {
        return sealed.clone();
    }

    /** {@code keyId:base64} for storage in a text column. */
    public String encode() {
        return keyId + ':' + Base64.getEncoder().encodeToString(sealed);
    }

    /**
     * The length of {@link #encode()}, without encoding: size checks run each time a batch record
     * is made, for every PID of the batch.
     */
    public int encodedLength() {
        return keyId.length() + 1 + 4 * ((sealed.length + 2) / 3); // padded base64 (keyId is ASCII)
    }

    public static SealedSecret decode(String text) {
        requireArgument(text != null && text.indexOf(':') > 0, "secret", "sealed secret must be keyId:base64");
        int colon = text.indexOf(':');
        try {
            return new SealedSecret(
                    text.substring(0, colon), Base64.getDecoder().decode(text.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            throw io.pidpool.core.error.PidPoolException.invalid("secret", "sealed secret is not valid base64");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SealedSecret other && keyId.equals(other.keyId) && Arrays.equals(sealed, other.sealed);
    }

    @Override
    public int hashCode() {
        return 31 * keyId.hashCode() + Arrays.hashCode(sealed);
    }

    /** Never prints the ciphertext: logs should not even carry that. */
    @Override
    public String toString() {
        return "SealedSecret[keyId=" + keyId + "]";
    }
}
