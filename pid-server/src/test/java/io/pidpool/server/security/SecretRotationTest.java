package io.pidpool.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.fake.InMemoryDatabase;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.secret.SecretSealer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SecretRotationTest {
    static final String A = Base64.getEncoder().encodeToString(new byte[32]);
    static final String B = Base64.getEncoder().encodeToString("0123456789abcdef0123456789abcdef".getBytes());
    static final String C = Base64.getEncoder().encodeToString("fedcba9876543210".getBytes());
    static final ModuleKey MODULE = ModuleKey.parse("fin#risk#scorer");

    final Repositories repos = InMemoryDatabase.create().repositories();
    final SecretSealer oldRing = SecretSealer.fromConfig("a", Map.of("a", A));
    final SecretSealer ring = SecretSealer.fromConfig("b", Map.of("a", A, "b", B));
    final List<List<Operation<String>>> submitted = new ArrayList<>();
    final SecretRotation rotation = new SecretRotation(ring, repos.pids(), repos.operations(), (ops, who) -> {
        submitted.add(ops);
        return new BatchId(4242);
    });

    SecretRotationTest() {
        repos.modules().put(ModuleConfig.of(MODULE, 1));
        repos.pids()
                .insertAll(List.of(
                        account("p1", oldRing.seal("pw-1"), 10, Map.of("k", "v")),
                        account("p2", oldRing.seal("pw-2"), 20, Map.of()),
                        account("p3", ring.seal("pw-3"), 30, Map.of()),
                        account(
                                "p4",
                                SecretSealer.fromConfig("c", Map.of("c", C)).seal("pw-4"),
                                40,
                                Map.of())));
    }

    static PidRecord account(
            String id, io.pidpool.core.model.SealedSecret secret, long quota, Map<String, String> attrs) {
        return new PidRecord(id, MODULE, quota, 5, PidAvailability.ACTIVE, secret, attrs);
    }

    @Test
    void statusCountsAccountsPerSealingKey() {
        SecretRotation.Status status = rotation.status();
        assertThat(status.currentKeyId()).isEqualTo("b");
        assertThat(status.keyIds()).containsExactlyInAnyOrder("a", "b");
        assertThat(status.accountsByKeyId()).isEqualTo(Map.of("a", 2, "b", 1, "c", 1));
        assertThat(status.stale()).isEqualTo(3);
    }

    @Test
    void resealSubmitsOneUpdateWithTheStaleAccountsAsTheyAre() {
        SecretRotation.Report report = rotation.reseal("ops-alice");
        assertThat(report.resealed()).isEqualTo(2);
        assertThat(report.unopenable()).containsExactly("p4");
        assertThat(report.batches()).containsExactly("4242");
        assertThat(submitted).hasSize(1);
        Operation.Update<String> update =
                (Operation.Update<String>) submitted.get(0).get(0);
        assertThat(update.pids())
                .containsExactly(
                        new PidSpec<>("p1", "pw-1", 10, 5, Map.of("k", "v")),
                        new PidSpec<>("p2", "pw-2", 20, 5, Map.of()));
        assertThat(update.pids()).allSatisfy(spec -> assertThat(spec.toString()).doesNotContain("pw-"));
    }

    @Test
    void refusesWhileABatchIsInFlightAndChangesNothing() {
        repos.operations()
                .append(BatchRecord.pending(
                        new BatchId(7),
                        List.of(new io.pidpool.core.model.Operation.ResetQuota<>(List.of("p1"))),
                        "someone",
                        Instant.parse("2026-01-01T00:00:00Z")));
        assertThatThrownBy(() -> rotation.reseal("ops-alice")).isInstanceOfSatisfying(PidPoolException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT);
            assertThat(e.field()).isEqualTo("batches");
            assertThat(e.getMessage()).contains("7").contains("PENDING");
        });
        assertThat(submitted).isEmpty();
    }

    @Test
    void nothingStaleNothingSubmitted() {
        SecretRotation fresh = new SecretRotation(
                SecretSealer.fromConfig("a", Map.of("a", A)), repos.pids(), repos.operations(), (ops, who) -> {
                    throw new AssertionError("nothing to submit");
                });
        repos.pids().deleteAll(List.of("p3", "p4"));
        assertThat(fresh.reseal("x").resealed()).isZero();
        assertThat(fresh.status().stale()).isZero();
    }
}
