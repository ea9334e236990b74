package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.PidRepository;
import io.pidpool.core.port.PidWithModule;
import io.pidpool.core.port.StorageLimits;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every {@link PidRepository} does. */
public abstract class PidRepositoryContract extends RepositoryContract {

    @BeforeEach
    void modules() {
        givenModules(FIN, OPS);
    }

    private PidRepository pids() {
        return repos.pids();
    }

    @Test
    void insertThenFindRoundTripsEveryField() {
        var account = new PidRecord(
                "u1@corp",
                FIN,
                1_000_000_000L,
                0,
                PidAvailability.COOLDOWN,
                new SealedSecret("key-2025", new byte[] {0, -1, 42, 7, -128}),
                Map.of("region", "华东 / east", "tier", "", "note", "a=b&c%d"));

        pids().insert(account);

        assertThat(pids().find("u1@corp")).contains(account);
        assertThat(pids().find("u2")).isEmpty();
    }

    @Test
    void duplicatePidIsRejectedAndNothingOfTheCallIsStored() {
        pids().insert(pid("u1", FIN));

        var e = expectError(
                ErrorCode.CONFLICT, "pid.id", () -> pids().insertAll(List.of(pid("u2", FIN), pid("u1", OPS))));

        assertThat(e.getMessage()).contains("u1");
        assertThat(pids().find("u2")).isEmpty();
        assertThat(pids().find("u1")).contains(pid("u1", FIN));
    }

    @Test
    void anIdTwiceInOneCallIsAConflict() {
        expectError(ErrorCode.CONFLICT, "pid.id", () -> pids().insertAll(List.of(pid("u1", FIN), pid("u1", FIN))));

        assertThat(pids().find("u1")).isEmpty();
    }

    @Test
    void pidOfAnUnknownModuleIsRejectedAndNothingIsStored() {
        ModuleKey unknown = ModuleKey.parse("no#such#module");

        var e = expectError(
                ErrorCode.NOT_FOUND, "pid.module", () -> pids().insertAll(List.of(pid("u1", FIN), pid("u2", unknown))));

        assertThat(e.getMessage()).contains("no#such#module");
        assertThat(pids().findByModule(FIN)).isEmpty();
    }

    @Test
    void negativeQuotaNeverReachesTheStore() {
        expectError(ErrorCode.INVALID_ARGUMENT, "pid.monthlyQuota", () -> pids().insert(
                        new PidRecord("u1", FIN, -1, 0, PidAvailability.ACTIVE, secret("u1"), Map.of())));
        expectError(ErrorCode.INVALID_ARGUMENT, "pid.overageAllowance", () -> pids().insert(
                        new PidRecord("u1", FIN, 5, -5, PidAvailability.ACTIVE, secret("u1"), Map.of())));

        assertThat(pids().find("u1")).isEmpty();
    }

    @Test
    void oversizedSecretOrAttributesAreRejectedAndNothingIsStored() {
        var hugeSecret = new SealedSecret("k1", new byte[StorageLimits.MAX_SEALED_SECRET]);
        var tooLongValue = Map.of("note", "x".repeat(StorageLimits.MAX_ATTRIBUTE_VALUE + 1));
        var tooMany = new HashMap<String, String>();
        IntStream.rangeClosed(0, StorageLimits.MAX_ATTRIBUTES).forEach(i -> tooMany.put("a" + i, "v"));

        expectError(ErrorCode.INVALID_ARGUMENT, "pid.secret", () -> pids().insertAll(List.of(
                pid("u1", FIN), new PidRecord("u2", FIN, 1, 0, PidAvailability.ACTIVE, hugeSecret, Map.of()))));
        expectError(ErrorCode.INVALID_ARGUMENT, "pid.attributes", () -> pids().insert(
                        new PidRecord("u3", FIN, 1, 0, PidAvailability.ACTIVE, secret("u3"), tooLongValue)));
        expectError(ErrorCode.INVALID_ARGUMENT, "pid.attributes", () -> pids().insert(
                        new PidRecord("u4", FIN, 1, 0, PidAvailability.ACTIVE, secret("u4"), tooMany)));

        assertThat(pids().findByModule(FIN)).isEmpty();
    }

    @Test
    void attributesAtTheLimitsAreStored() {
        var many = new HashMap<String, String>();
        IntStream.range(0, StorageLimits.MAX_ATTRIBUTES - 1).forEach(i -> many.put("a" + i, "v" + i));
        many.put("long", "é".repeat(StorageLimits.MAX_ATTRIBUTE_VALUE));
        var account = new PidRecord("u1", FIN, 1, 0, PidAvailability.ACTIVE, secret("u1"), many);

        pids().insert(account);

        assertThat(pids().find("u1")).contains(account);
    }

    @Test
    void idsAreCaseSensitive() {
        pids().insertAll(List.of(pid("u1", FIN), pid("U1", OPS)));

        assertThat(pids().find("u1")).map(PidRecord::module).contains(FIN);
        assertThat(pids().find("U1")).map(PidRecord::module).contains(OPS);
    }

    @Test
    void modulesOfNamesTheModuleOfEachExistingPid() {
        pids().insertAll(List.of(pid("u1", FIN), pid("U1", OPS), pid("u2", FIN)));

        assertThat(pids().modulesOf(List.of("u1", "U1", "u9"))).isEqualTo(Map.of("u1", FIN, "U1", OPS));
        assertThat(pids().modulesOf(List.of())).isEmpty();
        expectError(ErrorCode.INVALID_ARGUMENT, "pid.id", () -> pids().modulesOf(List.of("bad id")));
    }

    @Test
    void updateReplacesModuleQuotasStatusSecretAndAttributes() {
        pids().insert(pid("u1", FIN));
        var changed = new PidRecord("u1", OPS, 7, 3, PidAvailability.DISABLED, secret("rotated"), Map.of());

        pids().update(changed);

        assertThat(pids().find("u1")).contains(changed);
        assertThat(pids().findByModule(FIN)).isEmpty();
    }

    @Test
    void updateOfAnUnknownPidChangesNothing() {
        pids().insert(pid("u1", FIN));
        var changed = pid("u1", FIN).withStatus(PidAvailability.DISABLED);

        var e = expectError(ErrorCode.NOT_FOUND, "pid.id", () -> pids().updateAll(List.of(changed, pid("ghost", FIN))));

        assertThat(e.getMessage()).contains("ghost");
        assertThat(pids().find("u1")).contains(pid("u1", FIN));
        assertThat(pids().find("ghost")).isEmpty();
    }

    @Test
    void updateToAnUnknownModuleChangesNothing() {
        pids().insert(pid("u1", FIN));

        expectError(ErrorCode.NOT_FOUND, "pid.module", () -> pids().update(
                        pid("u1", FIN).withModule(ModuleKey.parse("no#such#module"))));

        assertThat(pids().find("u1")).contains(pid("u1", FIN));
    }

    @Test
    void deleteRemovesThePidAndItsAssignmentAllOrNothing() {
        pids().insertAll(List.of(pid("u1", FIN), pid("u2", FIN)));
        repos.assignments().record(new Assignment("u1", FIN, I1, PidState.DELETED, E1, 7));

        expectError(ErrorCode.NOT_FOUND, "pid.id", () -> pids().deleteAll(List.of("u1", "ghost")));
        assertThat(pids().find("u1")).isPresent();
        assertThat(repos.assignments().find("u1")).isPresent();

        pids().deleteAll(List.of("u1"));

        assertThat(pids().find("u1")).isEmpty();
        assertThat(repos.assignments().find("u1")).isEmpty();
        assertThat(pids().find("u2")).isPresent();
    }

    @Test
    void findByModuleAndFindAllAreOrderedById() {
        pids().insertAll(List.of(pid("c", FIN), pid("a", FIN), pid("B", FIN), pid("b", OPS)));

        assertThat(pids().findByModule(FIN)).extracting(PidRecord::id).containsExactly("B", "a", "c");
        assertThat(pids().findAll(List.of("c", "ghost", "b", "a")))
                .extracting(PidRecord::id)
                .containsExactly("a", "b", "c");
    }

    @Test
    void loadPidWithModuleGivesEveryModuleWithConfigAndPids() {
        ModuleKey empty = ModuleKey.parse("hr#pay#roll");
        repos.modules().put(new ModuleConfig(FIN, 3, 50_000, 1, Map.of(I1, 2)));
        repos.modules().put(ModuleConfig.of(empty, 1));
        pids().insertAll(List.of(pid("f2", FIN), pid("o1", OPS), pid("f1", FIN)));

        List<PidWithModule> view = pids().loadPidWithModule();

        assertThat(view).extracting(v -> v.module().key()).containsExactly(FIN, empty, OPS);
        assertThat(view.get(0).module()).isEqualTo(new ModuleConfig(FIN, 3, 50_000, 1, Map.of(I1, 2)));
        assertThat(view.get(0).pids()).containsExactly(pid("f1", FIN), pid("f2", FIN));
        assertThat(view.get(1).pids()).isEmpty();
        assertThat(view.get(2).pids()).containsExactly(pid("o1", OPS));
    }

    @Test
    void manyPidsGoInAndOutInOneCall() {
        var many = new ArrayList<PidRecord>();
        for (int i = 0; i < 2_500; i++) {
            many.add(pid(String.format("p%05d", i), i % 2 == 0 ? FIN : OPS));
        }

        pids().insertAll(many);
        expectError(ErrorCode.CONFLICT, "pid.id", () -> pids().insertAll(List.of(pid("new", FIN), many.get(2_499))));

        assertThat(pids().findByModule(FIN)).hasSize(1_250);
        assertThat(pids().findAll(many.stream().map(PidRecord::id).toList())).hasSize(2_500);
        assertThat(pids().find("new")).isEmpty();
        pids().deleteAll(many.stream().map(PidRecord::id).toList());
        assertThat(pids().loadPidWithModule())
                .allSatisfy(v -> assertThat(v.pids()).isEmpty());
    }

    @Test
    void changesSinceAVersionNameExactlyWhatChangedDeletesIncluded() {
        pids().insertAll(List.of(pid("kept", FIN), pid("changed", FIN), pid("deleted", OPS)));
        AccountSnapshot before = pids().loadAccounts();
        assertThat(before.versioned()).isTrue();
        assertThat(before.pids()).extracting(PidRecord::id).containsExactlyInAnyOrder("kept", "changed", "deleted");
        assertThat(pids().changesSince(before.version())).hasValueSatisfying(none -> {
            assertThat(none.none()).isTrue();
            assertThat(none.modules()).isEmpty();
            assertThat(none.changed()).isEmpty();
            assertThat(none.removed()).isEmpty();
        });

        PidRecord changed = pid("changed", FIN).withStatus(PidAvailability.DISABLED);
        pids().update(changed);
        pids().deleteAll(List.of("deleted"));
        pids().insert(pid("added", OPS));
        repos.modules().put(new ModuleConfig(FIN, 4, 0, 0, Map.of()));
        // a call that fails changes nothing, the version included
        expectError(ErrorCode.CONFLICT, "pid.id", () -> pids().insertAll(List.of(pid("x", FIN), pid("kept", FIN))));

        AccountChanges changes = pids().changesSince(before.version()).orElseThrow();
        AccountSnapshot after = pids().loadAccounts();
        assertThat(changes.since()).isEqualTo(before.version());
        assertThat(changes.version()).isEqualTo(after.version()).isEqualTo(before.version() + 4);
        assertThat(changes.changed()).containsExactlyInAnyOrder(changed, pid("added", OPS));
        assertThat(changes.removed()).containsExactly("deleted");
        assertThat(changes.modules()).containsExactlyInAnyOrderElementsOf(after.modules());
        assertThat(changes.modules()).contains(new ModuleConfig(FIN, 4, 0, 0, Map.of()));
        // the old snapshot plus the changes is the new snapshot
        var applied = new java.util.HashMap<String, PidRecord>();
        before.pids().forEach(p -> applied.put(p.id(), p));
        changes.changed().forEach(p -> applied.put(p.id(), p));
        changes.removed().forEach(applied::remove);
        assertThat(applied.values()).containsExactlyInAnyOrderElementsOf(after.pids());
    }

    @Test
    void aPrunedLogCannotProveAnOldVersionButTheCurrentOneStillHolds() {
        pids().insert(pid("a", FIN));
        long old = pids().loadAccounts().version();
        pids().update(pid("a", FIN).withStatus(PidAvailability.DISABLED));
        pids().insert(pid("b", FIN));
        long now = pids().loadAccounts().version();

        pids().pruneChanges(1); // keeps what changed in the newest version only

        assertThat(pids().changesSince(old)).isEmpty();
        assertThat(pids().changesSince(now - 1).orElseThrow().changed()).containsExactly(pid("b", FIN));
        assertThat(pids().changesSince(now).orElseThrow().none()).isTrue();
        assertThat(pids().changesSince(now + 1))
                .as("a version the store never had")
                .isEmpty();
    }
}
