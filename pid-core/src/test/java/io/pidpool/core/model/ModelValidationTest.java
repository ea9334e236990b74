package io.pidpool.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.PidPoolException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ModelValidationTest {
    private static final ModuleKey MODULE = ModuleKey.parse("fin#risk#scorer");

    @Test
    void moduleKeyRoundTripsAndRejectsBadText() {
        assertThat(MODULE.toString()).isEqualTo("fin#risk#scorer");
        assertThat(MODULE.department()).isEqualTo("fin");
        for (String bad : new String[] {"fin#risk", "fin#risk#scorer#x", "fin##scorer", "fin#ri/sk#s", "a b#c#d", ""}) {
            assertThatThrownBy(() -> ModuleKey.parse(bad))
                    .as(bad)
                    .isInstanceOf(PidPoolException.class)
                    .satisfies(e -> assertThat(((PidPoolException) e).field()).startsWith("module"));
        }
    }

    @Test
    void moduleKeysSortLikeTheirTextForms() {
        String[] parts = {"a", "a-", "a.b", "a_", "ab", "A", "a0", "b", "Z9", "-", "_"};
        var random = new java.util.Random(42);
        for (int i = 0; i < 2_000; i++) {
            ModuleKey x = new ModuleKey(
                    parts[random.nextInt(parts.length)],
                    parts[random.nextInt(parts.length)],
                    parts[random.nextInt(parts.length)]);
            ModuleKey y = new ModuleKey(
                    parts[random.nextInt(parts.length)],
                    parts[random.nextInt(parts.length)],
                    parts[random.nextInt(parts.length)]);
            assertThat(Integer.signum(x.compareTo(y)))
                    .as("%s vs %s", x, y)
                    .isEqualTo(Integer.signum(x.toString().compareTo(y.toString())));
        }
    }

    @Test
    void instanceIdsCannotCollideWithTheLeadersPidsNodes() {
        assertThat(InstanceId.of("host-1").pidsNodeName()).isEqualTo("host-1-pids");
        assertThatThrownBy(() -> InstanceId.of("host-1-pids")).isInstanceOf(PidPoolException.class);
    }

    @Test
    void quotasMustBeSane() {
        assertThatThrownBy(() -> new PidSpec<>("u1", "pw", -1, 0, Map.of()))
                .hasMessageContaining("monthlyQuota of u1 must be within");
        assertThatThrownBy(() -> new PidSpec<>("u1", "pw", PidRecord.MAX_MONTHLY_QUOTA + 1, 0, Map.of()))
                .isInstanceOf(PidPoolException.class);
    }

    @Test
    void secretsNeverPrint() {
        assertThat(new PidSpec<>("u1", "hunter2", 10, 0, Map.of()).toString()).doesNotContain("hunter2");
        assertThat(new SealedSecret("k1", new byte[] {1, 2, 3}).toString()).isEqualTo("SealedSecret[keyId=k1]");
        SealedSecret s = new SealedSecret("k1", new byte[] {1, 2, 3});
        assertThat(SealedSecret.decode(s.encode())).isEqualTo(s);
    }

    @Test
    void anAddNamesTheSpecWithoutASecret() {
        var specs = List.of(
                new PidSpec<String>("u1", "pw", 10, 0, Map.of()), new PidSpec<String>("u2", null, 10, 0, Map.of()));
        assertThatThrownBy(() -> new Operation.Add<>(MODULE, specs))
                .isInstanceOfSatisfying(io.pidpool.core.error.PidPoolException.class, e -> assertThat(e.field())
                        .isEqualTo("pids[1].secret"));
        assertThat(new Operation.Update<>(specs).pidIds()).containsExactly("u1", "u2");
    }

    @Test
    void sealingKeepsEverythingButTheSecretsForm() {
        var add = new Operation.Add<>(MODULE, List.of(new PidSpec<>("u1", "pw", 10, 2, Map.of("k", "v"))));
        Operation<Integer> sealed = add.withSecrets(String::length);
        assertThat(sealed)
                .isEqualTo(new Operation.Add<>(MODULE, List.of(new PidSpec<>("u1", 2, 10, 2, Map.of("k", "v")))));
        assertThat(sealed.toString()).doesNotContain("pw");
        assertThat(add.toString()).doesNotContain("pw");
    }

    @Test
    void aBatchRejectsDuplicatesAcrossOperations() {
        var add = new Operation.Add<String>(MODULE, List.of(new PidSpec<>("u1", "pw", 10, 0, Map.of())));
        var reset = new Operation.ResetQuota<String>(List.of("u1"));
        assertThatThrownBy(() -> OperationBatch.pending(new BatchId(1), List.of(add, reset), "op", Instant.EPOCH))
                .hasMessage("PID u1 appears in more than one operation of the batch");
        assertThatThrownBy(() -> new Operation.Delete<>(List.of("u1", "u1")))
                .hasMessage("PID u1 appears twice in one operation");
    }

    @Test
    void batchStatusMovesForwardOnly() {
        var batch = OperationBatch.pending(
                new BatchId(1), List.of(new Operation.Delete<>(List.of("u1"))), "op", Instant.EPOCH);
        var dealing = batch.withStatus(BatchStatus.DEALING, List.of());
        var dealed = dealing.withStatus(BatchStatus.DEALED, List.of(OperationResult.ok(0)));
        assertThat(dealed.status()).isEqualTo(BatchStatus.DEALED);
        assertThatThrownBy(() -> dealed.withStatus(BatchStatus.DEALING, List.of()))
                .hasMessage("batch cannot go from DEALED to DEALING");
    }
}
