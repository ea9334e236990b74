package io.pidpool.core.secret;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.SealedSecret;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals account passwords with AES-GCM and opens them again, under a keyring that can rotate.
 *
 * <p><b>Format.</b> {@link SealedSecret#sealed()} is {@code iv (12 bytes) || ciphertext || tag (16
 * bytes)}; {@link SealedSecret#keyId()} names the key. The key id is bound as additional authenticated
 * data ({@code "pidpool/secret/v1:" + keyId}), so relabelling a sealed secret with another key id
 * fails authentication instead of decrypting under the wrong key. Every seal draws a fresh random IV
 * from a {@link SecureRandom}: with 96-bit random IVs, one key stays within NIST's bound of 2^32 seals,
 * far beyond the number of accounts ever sealed.
 *
 * <p><b>Rotation.</b> The keyring maps key ids to 128- or 256-bit AES keys; one of them is current and
 * seals, all of them open. To rotate, add a new key and make it current: everything sealed before
 * still opens under its old key id, and {@link #reseal} moves a secret to the current key. Drop an old
 * key only once nothing sealed under it remains.
 *
 * <p><b>Errors.</b> An unknown key id throws {@link PidPoolException} {@link ErrorCode#NOT_FOUND}; a
 * tampered or foreign sealed secret {@link ErrorCode#INVALID_ARGUMENT}; a malformed key in the
 * configuration {@link ErrorCode#INVALID_ARGUMENT}. No message ever contains a plain text, a key or a
 * ciphertext, and {@link #toString()} shows only key ids.
 *
 * <p><b>Concurrency.</b> Thread-safe: each thread keeps its own {@link Cipher} per direction (ciphers
 * are not thread-safe; making one per call cost more than sealing a password, about 20 µs against 3 µs
 * warm), initialised afresh for every secret; the keyring never changes after {@link Builder#build()},
 * and {@link SecureRandom} is thread-safe.
 */
public final class SecretSealer {
    public static final String TRANSFORMATION = "AES/GCM/NoPadding";
    public static final int IV_BYTES = 12;
    public static final int TAG_BITS = 128;
    private static final int TAG_BYTES = TAG_BITS / 8;
    private static final String AAD_PREFIX = "pidpool/secret/v1:";

    private final Map<String, SecretKeySpec> keys;
    private final String currentKeyId;
    private final SecureRandom random;
    private final ThreadLocal<Cipher> sealers = ThreadLocal.withInitial(SecretSealer::newCipher);
    private final ThreadLocal<Cipher> openers = ThreadLocal.withInitial(SecretSealer::newCipher);

    private SecretSealer(Map<String, SecretKeySpec> keys, String currentKeyId, SecureRandom random) {
        this.keys = keys;
        this.currentKeyId = currentKeyId;
        this.random = random;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A sealer with one key from configuration ({@code security.secretKey}), named by {@link
     * #keyIdOf(byte[])} so that the same key always gets the same id and a new key a new one.
     */
    public static SecretSealer fromSingleKey(String base64Key) {
        byte[] key = decodeKey(base64Key, "secretKey");
        try {
            String id = keyIdOf(key);
            return builder().key(id, key).current(id).build();
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    /** A sealer from configuration: key id -> base64 AES key, and the id of the current one. */
    public static SecretSealer fromConfig(String currentKeyId, Map<String, String> base64Keys) {
        requireNonNull(base64Keys, "secretKeys");
        Builder b = builder();
        base64Keys.forEach(b::key);
        return b.current(currentKeyId).build();
    }

    /**
     * A stable, non-secret name for a key: {@code "k"} and the first 8 hex digits of SHA-256 over a
     * label and the key (a key check value; 32 bits of a hash reveal nothing usable about the key).
     */
    public static String keyIdOf(byte[] key) {
        requireNonNull(key, "secretKey");
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update("pidpool/key-id/v1:".getBytes(StandardCharsets.US_ASCII));
            byte[] digest = sha.digest(key);
            return "k" + HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Seals a password (UTF-8) under the current key. */
    public SealedSecret seal(String plaintext) {
        requireNonNull(plaintext, "secret");
        byte[] bytes = plaintext.getBytes(StandardCharsets.UTF_8);
        try {
            return sealBytes(bytes);
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /** Seals bytes under the current key. */
    public SealedSecret sealBytes(byte[] plaintext) {
        requireNonNull(plaintext, "secret");
        byte[] iv = new byte[IV_BYTES];
        random.nextBytes(iv);
        try {
            Cipher cipher = sealers.get();
            cipher.init(Cipher.ENCRYPT_MODE, keys.get(currentKeyId), new GCMParameterSpec(TAG_BITS, iv));
            cipher.updateAAD(aad(currentKeyId));
            byte[] out = new byte[IV_BYTES + cipher.getOutputSize(plaintext.length)];
            System.arraycopy(iv, 0, out, 0, IV_BYTES);
            int written = cipher.doFinal(plaintext, 0, plaintext.length, out, IV_BYTES);
            if (written != out.length - IV_BYTES) {
                out = Arrays.copyOf(out, IV_BYTES + written);
            }
            return new SealedSecret(currentKeyId, out);
        } catch (GeneralSecurityException e) {
            throw PidPoolException.illegalState(
                    "AES-GCM sealing failed: %s", e.getClass().getSimpleName());
        }
    }

    /** Opens a sealed password (UTF-8). */
    public String open(SealedSecret sealed) {
        byte[] bytes = openBytes(sealed);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw PidPoolException.invalid("secret", "sealed secret under key '%s' is not UTF-8 text", sealed.keyId());
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /** Opens a sealed secret under whichever key of the keyring its key id names. */
    public byte[] openBytes(SealedSecret sealed) {
        requireNonNull(sealed, "secret");
        SecretKeySpec key = keys.get(sealed.keyId());
        if (key == null) {
            throw new PidPoolException(
                    ErrorCode.NOT_FOUND,
                    "secret.keyId",
                    String.format(
                            "no key '%s' in the keyring (it has %s): was it rotated out too early?",
                            sealed.keyId(), keys.keySet()));
        }
        byte[] data = sealed.sealed();
        requireArgument(
                data.length >= IV_BYTES + TAG_BYTES,
                "secret",
                "sealed secret under key '%s' is %d bytes, shorter than IV and tag (%d)",
                sealed.keyId(),
                data.length,
                IV_BYTES + TAG_BYTES);
        try {
            Cipher cipher = openers.get();
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, data, 0, IV_BYTES));
            cipher.updateAAD(aad(sealed.keyId()));
            return cipher.doFinal(data, IV_BYTES, data.length - IV_BYTES);
        } catch (AEADBadTagException e) {
            throw PidPoolException.invalid(
                    "secret",
                    "sealed secret failed authentication under key '%s': it was altered, or sealed with a"
                            + " different key of that id",
                    sealed.keyId());
        } catch (GeneralSecurityException e) {
            throw PidPoolException.illegalState(
                    "AES-GCM opening failed: %s", e.getClass().getSimpleName());
        } finally {
            Arrays.fill(data, (byte) 0);
        }
    }

    /** Whether this keyring has the key {@code sealed} names. */
    public boolean canOpen(SealedSecret sealed) {
        return keys.containsKey(requireNonNull(sealed, "secret").keyId());
    }

    /**
     * The same secret sealed under the current key (rotation); returns {@code sealed} itself when it
     * already is.
     */
    public SealedSecret reseal(SealedSecret sealed) {
        if (requireNonNull(sealed, "secret").keyId().equals(currentKeyId)) {
            return sealed;
        }
        byte[] plain = openBytes(sealed);
        try {
            return sealBytes(plain);
        } finally {
            Arrays.fill(plain, (byte) 0);
        }
    }

    public String currentKeyId() {
        return currentKeyId;
    }

    public Set<String> keyIds() {
        return keys.keySet();
    }

    @Override
    public String toString() {
        return "SecretSealer[current=" + currentKeyId + ", keys=" + keys.keySet() + "]";
    }

    private static Cipher newCipher() {
        try {
            return Cipher.getInstance(TRANSFORMATION);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has " + TRANSFORMATION, e);
        }
    }

    private static byte[] aad(String keyId) {
        return (AAD_PREFIX + keyId).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] decodeKey(String base64, String field) {
        requireArgument(base64 != null && !base64.isBlank(), field, "%s is required (a base64 AES key)", field);
        byte[] key;
        try {
            key = Base64.getDecoder().decode(base64.strip());
        } catch (IllegalArgumentException e) {
            // never echo the value: it is (meant to be) a key
            throw PidPoolException.invalid(field, "%s is not valid base64", field);
        }
        checkKeyLength(key, field);
        return key;
    }

    private static void checkKeyLength(byte[] key, String field) {
        if (key.length != 16 && key.length != 32) {
            int length = key.length;
            Arrays.fill(key, (byte) 0);
            throw PidPoolException.invalid(
                    field, "%s must be a 128- or 256-bit AES key (16 or 32 bytes), was %d bytes", field, length);
        }
    }

    /** Builds a {@link SecretSealer}. Not thread-safe; use it on one thread and then drop it. */
    public static final class Builder {
        private final Map<String, SecretKeySpec> keys = new LinkedHashMap<>();
        private String current;
        private SecureRandom random;

        private Builder() {}

        /** Adds a key from its base64 text (configuration). */
        public Builder key(String keyId, String base64Key) {
            Names.requireToken(keyId, "secret.keyId");
            byte[] key = decodeKey(base64Key, "secretKeys." + keyId);
            try {
                return key(keyId, key);
            } finally {
                Arrays.fill(key, (byte) 0);
            }
        }

        /** Adds a key; the bytes are copied. */
        public Builder key(String keyId, byte[] key) {
            Names.requireToken(keyId, "secret.keyId");
            requireNonNull(key, "secretKeys." + keyId);
            requireArgument(!keys.containsKey(keyId), "secret.keyId", "key id '%s' appears twice", keyId);
            checkKeyLength(key.clone(), "secretKeys." + keyId);
            keys.put(keyId, new SecretKeySpec(key, "AES"));
            return this;
        }

        /** The key that seals; required, and must be one of the keys. */
        public Builder current(String keyId) {
            this.current = keyId;
            return this;
        }

        /** The source of IVs; default a new {@link SecureRandom}. */
        public Builder random(SecureRandom random) {
            this.random = requireNonNull(random, "random");
            return this;
        }

        public SecretSealer build() {
            requireArgument(!keys.isEmpty(), "secretKeys", "the keyring needs at least one key");
            requireArgument(current != null, "secret.currentKeyId", "the current key id is required");
            requireArgument(
                    keys.containsKey(current),
                    "secret.currentKeyId",
                    "current key '%s' is not in the keyring %s",
                    current,
                    keys.keySet());
            return new SecretSealer(
                    Collections.unmodifiableMap(new LinkedHashMap<>(keys)),
                    current,
                    random == null ? new SecureRandom() : random);
        }
    }
}
