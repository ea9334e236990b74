package io.pidpool.client;

import io.pidpool.core.model.SealedSecret;

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
    /** The clear-text password sealed in {@code sealed}. */
    String open(SealedSecret sealed);
}
