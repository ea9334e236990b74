package io.pidpool.client;

/**
 * Decrypts a PID's password. PID nodes in ZooKeeper carry the password sealed (AES-GCM, docs/design.md §2
 * promise 6); the SDK opens it just before {@link PidListener#onAssigned} and never logs it.
 *
 * <p>Usually not written by hand: {@link PidClient.Builder#secretKeys} and {@link
 * PidClient.Builder#secretKey} make one from the cluster's AES keys (core's {@code SecretSealer}).
 *
 * <p>Called on the callback executor, possibly from several threads at once: implementations must be
 * thread-safe. Throwing (unknown key id, tampered data) makes the assignment fail like a throwing
 * {@code onAssigned}; the exception message must not contain key material.
 */
@FunctionalInterface
public interface SecretOpener {
    /**
     * The clear-text password sealed under the key {@code keyId}.
     *
     * @param keyId the id of the key it was sealed with (a cluster may hold several during a key
     *     rotation)
     * @param ciphertext what the key sealed: for the cluster's own keys, AES-GCM nonce, ciphertext and tag
     */
    String open(String keyId, byte[] ciphertext);
}
