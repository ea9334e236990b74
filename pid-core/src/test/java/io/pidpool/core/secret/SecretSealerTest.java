package io.pidpool.core.secret;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.SealedSecret;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SecretSealerTest {
    private static final String PASSWORD = "s3cr3t-Pa55wörd-密码";
    private static final SecureRandom RANDOM = new SecureRandom();

    private static String newKey(int bytes) {
        byte[] key = new byte[bytes];
        RANDOM.nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }

    private final String k1 = newKey(32);
    private final String k2 = newKey(16);

    @Test
    void aSealedPasswordOpensToTheSameText() {
        SecretSealer sealer = SecretSealer.builder().key("k1", k1).current("k1").build();

        SealedSecret sealed = sealer.seal(PASSWORD);

        assertThat(sealed.keyId()).isEqualTo("k1");
        byte[] plainBytes = PASSWORD.getBytes(StandardCharsets.UTF_8);
        assertThat(sealed.sealed()).hasSize(SecretSealer.IV_BYTES + plainBytes.length + 16);
        assertThat(new String(sealed.sealed(), StandardCharsets.ISO_8859_1)).doesNotContain("s3cr3t");
        assertThat(sealer.open(sealed)).isEqualTo(PASSWORD);
        assertThat(sealer.open(SealedSecret.decode(sealed.encode()))).isEqualTo(PASSWORD);
    }

    @Test
    void emptyAndBinarySecretsRoundTrip() {
        SecretSealer sealer = SecretSealer.builder().key("k1", k2).current("k1").build();
        byte[] binary = {0, (byte) 0xff, 1, (byte) 0x80};

        assertThat(sealer.open(sealer.seal(""))).isEmpty();
        assertThat(sealer.openBytes(sealer.sealBytes(binary))).containsExactly(binary);
    }

    @Test
    void afterRotationOldSecretsStillOpenAndNewOnesUseTheNewKey() {
        SecretSealer before = SecretSealer.builder().key("k1", k1).current("k1").build();
        SealedSecret old = before.seal(PASSWORD);

        SecretSealer after = SecretSealer.fromConfig("k2", Map.of("k1", k1, "k2", k2));
        SealedSecret fresh = after.seal("new-password");

        assertThat(after.open(old)).isEqualTo(PASSWORD);
        assertThat(fresh.keyId()).isEqualTo("k2");
        assertThat(after.open(fresh)).isEqualTo("new-password");
        SealedSecret moved = after.reseal(old);
        assertThat(moved.keyId()).isEqualTo("k2");
        assertThat(after.open(moved)).isEqualTo(PASSWORD);
        assertThat(after.reseal(fresh)).isSameAs(fresh);
        // a keyring without the new key cannot open what it sealed
        assertThat(before.canOpen(fresh)).isFalse();
        assertThatThrownBy(() -> before.open(fresh))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("no key 'k2' in the keyring")
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.NOT_FOUND))
                .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo("secret.keyId"));
    }

    @Test
    void everyAlteredByteIsDetectedAndNeverRevealsThePlainText() {
        SecretSealer sealer = SecretSealer.builder().key("k1", k1).current("k1").build();
        byte[] good = sealer.seal(PASSWORD).sealed();

        // every byte: IV, ciphertext and tag
        for (int i = 0; i < good.length; i++) {
            byte[] bad = good.clone();
            bad[i] ^= 0x01;
            assertTampered(sealer, new SealedSecret("k1", bad));
        }
        assertTampered(sealer, new SealedSecret("k1", java.util.Arrays.copyOf(good, good.length - 1)));
        byte[] longer = java.util.Arrays.copyOf(good, good.length + 1);
        assertTampered(sealer, new SealedSecret("k1", longer));
    }

    @Test
    void aThreadKeepsSealingAndOpeningAfterAFailedOpen() {
        // each thread reuses its ciphers: a failed open must not leave them unusable
        SecretSealer sealer = SecretSealer.builder().key("k1", k1).current("k1").build();
        SealedSecret sealed = sealer.seal(PASSWORD);
        byte[] bad = sealed.sealed();
        bad[bad.length - 1] ^= 0x01;

        assertTampered(sealer, new SealedSecret("k1", bad));

        assertThat(sealer.open(sealed)).isEqualTo(PASSWORD);
        assertThat(sealer.open(sealer.seal("after"))).isEqualTo("after");
    }

    @Test
    void oneThreadAlternatingSealersAndKeysOpensEachUnderItsOwnKey() {
        SecretSealer rotated = SecretSealer.builder()
                .key("k1", k1)
                .key("k2", newKey(32))
                .current("k2")
                .build();
        SecretSealer other =
                SecretSealer.builder().key("k1", newKey(16)).current("k1").build();
        SealedSecret underK1 =
                SecretSealer.builder().key("k1", k1).current("k1").build().seal("one");

        for (int i = 0; i < 3; i++) {
            SealedSecret underK2 = rotated.seal("two" + i);
            SealedSecret foreign = other.seal("three" + i);
            assertThat(rotated.open(underK1)).isEqualTo("one");
            assertThat(rotated.open(underK2)).isEqualTo("two" + i);
            assertThat(other.open(foreign)).isEqualTo("three" + i);
            assertTampered(other, underK1);
        }
    }

    @Test
    void aSecretRelabelledWithAnotherKeyIdFailsBecauseTheKeyIdIsAuthenticated() {
        // the same key under two ids: only the AAD tells them apart
        SecretSealer sealer = SecretSealer.fromConfig("a", Map.of("a", k1, "b", k1));
        SealedSecret sealed = sealer.seal(PASSWORD);

        assertTampered(sealer, new SealedSecret("b", sealed.sealed()));
        assertThat(sealer.open(sealed)).isEqualTo(PASSWORD);
    }

    @Test
    void aWrongKeyUnderTheRightIdFails() {
        SecretSealer mine = SecretSealer.builder().key("k1", k1).current("k1").build();
        SecretSealer theirs =
                SecretSealer.builder().key("k1", newKey(32)).current("k1").build();

        assertTampered(theirs, mine.seal(PASSWORD));
    }

    @Test
    void tooShortASealedSecretIsRejected() {
        SecretSealer sealer = SecretSealer.builder().key("k1", k1).current("k1").build();

        assertThatThrownBy(() -> sealer.open(new SealedSecret("k1", new byte[27])))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("shorter than IV and tag")
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    }

    @Test
    void everySealDrawsAFreshIv() {
        SecretSealer sealer = SecretSealer.builder().key("k1", k1).current("k1").build();
        Set<String> ivs = new HashSet<>();
        Set<String> ciphertexts = new HashSet<>();

        for (int i = 0; i < 10_000; i++) {
            byte[] sealed = sealer.seal(PASSWORD).sealed();
            ivs.add(Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(sealed, SecretSealer.IV_BYTES)));
            ciphertexts.add(Base64.getEncoder().encodeToString(sealed));
        }

        assertThat(ivs).hasSize(10_000);
        assertThat(ciphertexts).hasSize(10_000);
    }

    @Test
    void aSingleConfiguredKeyGetsAStableIdDerivedFromIt() {
        SecretSealer one = SecretSealer.fromSingleKey(k1);
        SecretSealer again = SecretSealer.fromSingleKey(k1);
        SecretSealer other = SecretSealer.fromSingleKey(k2);

        assertThat(one.currentKeyId()).matches("k[0-9a-f]{8}").isEqualTo(again.currentKeyId());
        assertThat(other.currentKeyId()).isNotEqualTo(one.currentKeyId());
        assertThat(again.open(one.seal(PASSWORD))).isEqualTo(PASSWORD);
    }

    @Test
    void malformedKeysAreRejectedWithoutEchoingThem() {
        String notBase64 = "this is not base64 at all!";
        String shortKey = newKey(20);
        record Case(Runnable build, String field, String leak) {}
        for (Case c : new Case[] {
            new Case(() -> SecretSealer.fromSingleKey(notBase64), "secretKey", notBase64),
            new Case(() -> SecretSealer.fromSingleKey(shortKey), "secretKey", shortKey),
            new Case(() -> SecretSealer.fromSingleKey(" "), "secretKey", "\u0000"),
            new Case(() -> SecretSealer.builder().key("k1", shortKey), "secretKeys.k1", shortKey),
            new Case(() -> SecretSealer.builder().key("bad id", k1), "secret.keyId", k1),
            new Case(() -> SecretSealer.builder().key("k1", k1).key("k1", k2), "secret.keyId", k2),
            new Case(() -> SecretSealer.builder().build(), "secretKeys", "\u0000"),
            new Case(() -> SecretSealer.builder().key("k1", k1).build(), "secret.currentKeyId", k1),
            new Case(() -> SecretSealer.fromConfig("k9", Map.of("k1", k1)), "secret.currentKeyId", k1)
        }) {
            assertThatThrownBy(c.build()::run)
                    .isInstanceOf(PidPoolException.class)
                    .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                    .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo(c.field()))
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain(c.leak()));
        }
    }

    @Test
    void theSealerNeverPrintsKeys() {
        SecretSealer sealer = SecretSealer.fromConfig("k2", Map.of("k1", k1, "k2", k2));

        assertThat(sealer.toString()).contains("current=k2").doesNotContain(k1).doesNotContain(k2);
        assertThat(sealer.keyIds()).containsExactlyInAnyOrder("k1", "k2");
    }

    @Test
    void concurrentSealsAndOpensDoNotInterfere() throws Exception {
        SecretSealer sealer = SecretSealer.builder().key("k1", k1).current("k1").build();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            java.util.List<java.util.concurrent.Future<Boolean>> results = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    for (int i = 0; i < 500; i++) {
                        String p = "pw-" + thread + "-" + i;
                        if (!sealer.open(sealer.seal(p)).equals(p)) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (var f : results) {
                assertThat(f.get(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void assertTampered(SecretSealer sealer, SealedSecret sealed) {
        assertThatThrownBy(() -> sealer.open(sealed))
                .isInstanceOf(PidPoolException.class)
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo("secret"))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(PASSWORD))
                .satisfies(e -> assertThat(e.getCause()).isNull());
    }
}
