package io.pidpool.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Builder validation and the calls that need no ZooKeeper. */
class PidClientBuilderTest {
    private static final PidListener NOOP = new PidListener() {
        @Override
        public void onAssigned(PidAccount account) {}

        @Override
        public void onRevoked(PidAccount account) {}
    };

    private static PidClient.Builder valid() {
        return PidClient.builder()
                .connectString("127.0.0.1:1")
                .module("fin#risk#scorer")
                .secretOpener((keyId, ciphertext) -> "x")
                .listener(NOOP);
    }

    private static void rejects(String field, Consumer<PidClient.Builder> setter) {
        assertThatThrownBy(() -> setter.accept(valid())).isInstanceOfSatisfying(PidPoolException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            assertThat(e.field()).isEqualTo(field);
        });
    }

    @Test
    void badSettingsAreRejectedNamingTheField() {
        rejects("connectString", b -> b.connectString(" "));
        rejects("connectString", b -> b.connectString("zk:2181/chroot"));
        rejects("module", b -> b.module("fin#risk"));
        rejects("module.module", b -> b.module("fin#r/isk#scorer"));
        rejects("cluster", b -> b.cluster("a/b"));
        rejects("weight", b -> b.weight(0));
        rejects("weight", b -> b.weight(1001));
        rejects("instanceId", b -> b.instanceId("has space"));
        rejects("instanceId", b -> b.instanceId("x".repeat(48)));
        rejects("redisAddress", b -> b.redisAddress("127.0.0.1:6379"));
        rejects("sessionTimeout", b -> b.sessionTimeout(Duration.ofMillis(10)));
        rejects("startTimeout", b -> b.startTimeout(Duration.ZERO));
        rejects("callbackDeadline", b -> b.callbackDeadline(null));
        rejects("callbackDeadline", b -> b.callbackDeadline(Duration.ofMillis(99)));
        rejects(
                "callbackDeadline",
                b -> b.callbackDeadline(Duration.ofMinutes(5).plusMillis(1)));
        rejects("listener", b -> b.listener(null));
        rejects("secretOpener", b -> b.secretOpener(null));
        rejects("ticker", b -> b.ticker(null));
    }

    @Test
    void secretKeysAreValidatedWithoutRepeatingTheKey() {
        String notBase64 = "this is not a key!";
        String tooShort = Base64.getEncoder().encodeToString("ten bytes!".getBytes());
        Map<String, String> withNullId = new LinkedHashMap<>();
        withNullId.put(null, Base64.getEncoder().encodeToString(new byte[16]));

        rejects("secretKeys", b -> b.secretKeys(null));
        rejects("secretKeys", b -> b.secretKeys(Map.of()));
        rejects("secret.keyId", b -> b.secretKeys(Map.of("bad id", tooShort)));
        rejects("secret.keyId", b -> b.secretKeys(withNullId));
        rejects("secretKeys.k1", b -> b.secretKeys(Map.of("k1", notBase64)));
        rejects("secretKeys.k1", b -> b.secretKeys(Map.of("k1", tooShort)));
        rejects("secretKey", b -> b.secretKey(notBase64));
        rejects("secretKey", b -> b.secretKey(tooShort));
        rejects("secretKey", b -> b.secretKey(null));
        for (Runnable bad : new Runnable[] {
            () -> valid().secretKeys(Map.of("k1", notBase64)),
            () -> valid().secretKeys(Map.of("k1", tooShort)),
            () -> valid().secretKey(notBase64),
            () -> valid().secretKey(tooShort)
        }) {
            assertThatThrownBy(bad::run).hasMessageNotContaining(notBase64).hasMessageNotContaining(tooShort);
        }
    }

    @Test
    void secretKeysStandInForASecretOpener() {
        String key = Base64.getEncoder().encodeToString(new byte[32]);
        PidClient viaKeys = PidClient.builder()
                .connectString("h:1")
                .module("a#b#c")
                .listener(NOOP)
                .secretKeys(Map.of("k1", key))
                .build();
        PidClient viaKey = PidClient.builder()
                .connectString("h:1")
                .module("a#b#c")
                .listener(NOOP)
                .secretKey(key)
                .build();
        assertThat(viaKeys.state()).isEqualTo(PidClient.State.LATENT);
        assertThat(viaKeys.toString()).doesNotContain(key);
        viaKeys.close();
        viaKey.close();
    }

    @Test
    void requiredSettingsAreCheckedAtBuild() {
        assertThatThrownBy(
                        () -> PidClient.builder().module("a#b#c").listener(NOOP).build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("connectString"));
        assertThatThrownBy(() ->
                        PidClient.builder().connectString("h:1").listener(NOOP).build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("module"));
        assertThatThrownBy(() ->
                        PidClient.builder().connectString("h:1").module("a#b#c").build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("listener"));
        assertThatThrownBy(() -> PidClient.builder()
                        .connectString("h:1")
                        .module("a#b#c")
                        .listener(NOOP)
                        .build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("secretOpener"));
    }

    @Test
    void aBuiltClientIsLatentHoldsNothingAndClosesWithoutStarting() {
        PidClient client = valid().redisAddress("redis://127.0.0.1:6379").build();
        assertThat(client.state()).isEqualTo(PidClient.State.LATENT);
        assertThat(client.heldPids()).isEmpty();
        assertThat(client.registration()).isEmpty();
        client.close();
        assertThat(client.state()).isEqualTo(PidClient.State.CLOSED);
        client.close(); // idempotent
        assertThatThrownBy(client::start).isInstanceOfSatisfying(PidPoolException.class, e -> assertThat(e.code())
                .isEqualTo(ErrorCode.ILLEGAL_STATE));
    }

    @Test
    void quotaCallsWithoutARedisAddressSayWhatIsMissing() {
        PidClient client = valid().build();
        try {
            assertThatThrownBy(() -> client.tryAcquire(1)).isInstanceOfSatisfying(PidPoolException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE);
                assertThat(e.getMessage()).contains("tryAcquire", "redisAddress");
            });
            assertThatThrownBy(() -> client.refund("d", "r", 1)).isInstanceOfSatisfying(PidPoolException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE);
                assertThat(e.getMessage()).contains("refund", "redisAddress");
            });
            assertThatThrownBy(() -> client.tryAcquireAsync(1)).isInstanceOfSatisfying(PidPoolException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE);
                assertThat(e.getMessage()).contains("tryAcquireAsync", "redisAddress");
            });
        } finally {
            client.close();
        }
    }

    @Test
    void quotaCallsBeforeStartAreIllegalState() {
        PidClient client = valid().redisAddress("redis://127.0.0.1:6379").build();
        try {
            assertThatThrownBy(() -> client.tryAcquire(1))
                    .isInstanceOfSatisfying(
                            PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
            PidClient batched = valid().redisAddress("redis://127.0.0.1:6379")
                    .batchedPermits(true)
                    .build();
            assertThatThrownBy(() -> batched.tryAcquireAsync(1))
                    .isInstanceOfSatisfying(
                            PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
            batched.close();
        } finally {
            client.close();
        }
    }

    @Test
    void redisSettingsAreValidated() {
        rejects("redisPassword", b -> b.redisPassword(""));
        rejects("redisson", b -> b.redisson(null));
        rejects("redisAddress", b -> b.redisAddress("redis://127.0.0.1"));
        rejects("redisAddress", b -> b.redisAddress("redis://host:6379/2"));
        rejects("redisDatabase", b -> b.redisDatabase(-1));
        rejects("redisTimeout", b -> b.redisTimeout(Duration.ofMillis(10)));
        rejects("redisTimeout", b -> b.redisTimeout(Duration.ofMinutes(2)));
        rejects("redisConfigYaml", b -> b.redisConfigYaml(" "));
        rejects("redisConfigYaml", b -> b.redisConfigYaml("singleServerConfig:\n  noSuchSetting: 1\n"));
        rejects("redisConfigYaml", b -> b.redisConfigYaml("clusterServersConfig: [unclosed"));
    }

    @Test
    void singleServerRedisSettingsNeedARedisAddress() {
        String yaml = "singleServerConfig:\n  address: \"redis://127.0.0.1:6379\"\n  database: 5\n";
        rejects("redisDatabase", b -> b.redisConfigYaml(yaml).redisDatabase(5).build());
        rejects(
                "redisPassword",
                b -> b.redisPassword("pw").redisConfigYaml(yaml).build());
        rejects(
                "redisTimeout",
                b -> b.redisTimeout(Duration.ofSeconds(1)).redisConfigYaml(yaml).build());
        PidClient client = valid().redisAddress("rediss://cache.example:6380")
                .redisDatabase(5)
                .redisPassword("pw")
                .redisTimeout(Duration.ofSeconds(1))
                .build();
        client.close();
        PidClient fromYaml = valid().redisConfigYaml(yaml).build();
        assertThat(fromYaml.pidsWithoutLimit()).isZero();
        fromYaml.close();
    }

    @Test
    void accountNeverPrintsItsSecret() {
        PidAccount account = new PidAccount("u1", "hunter2", 10_000, 500, Map.of("region", "eu"));
        assertThat(account.toString()).doesNotContain("hunter2").contains("u1", "10000", "region");
        assertThat(account.secret()).isEqualTo("hunter2");
        assertThatThrownBy(() -> new PidAccount("bad id", "x", 1, 0, Map.of())).isInstanceOf(PidPoolException.class);
    }
}
