package io.pidpool.it.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.it.e2e.SdkInstance.Kind;
import io.pidpool.it.zk.ZooKeepers;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/design.md §2 promises 1–3 end to end: the real leader hands 1,000 PIDs out to 10 real SDK instances
 * (all held, disjoint, balanced, no double login on the platform), and a join moves exactly the
 * theoretical minimum.
 */
class AllocationE2eIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey B = ModuleKey.parse("ops#audit#reader");
    static final ModuleKey C = ModuleKey.parse("mkt#quote#feed");
    private static TestingServer zookeeper;
    private E2eWorld world;

    @BeforeAll
    static void startZooKeeper() {
        zookeeper = ZooKeepers.standalone();
    }

    @AfterAll
    static void stopZooKeeper() throws IOException {
        zookeeper.close();
    }

    @AfterEach
    void tearDown() {
        if (world != null) {
            world.close();
        }
    }

    @Test
    void thousandPidsOverThreeModulesAndTenSdkInstancesAreHeldDisjointAndBalanced() {
        world = new E2eWorld(zookeeper.getConnectString(), "e2e-1000", 1);
        List<SdkInstance> started = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            started.add(world.instance(A, "a" + i));
        }
        for (int i = 0; i < 3; i++) {
            started.add(world.instance(B, "b" + i));
            started.add(world.instance(C, "c" + i));
        }
        world.awaitAnswered(started);
        List<String> a = E2eWorld.pids("a", 400);
        List<String> b = E2eWorld.pids("b", 350);
        List<String> c = E2eWorld.pids("c", 250);
        long addedAt = System.nanoTime();
        world.leader.addPids(A, a);
        world.leader.addPids(B, b);
        world.leader.addPids(C, c);
        world.awaitSettled(A, a);
        world.awaitSettled(B, b);
        world.awaitSettled(C, c);
        long settledAt = System.nanoTime();

        assertThat(world.platform.ledger().doubleLogins()).isEmpty();
        world.assertSafety();
        // every PID was assigned exactly once: the hand-out moved nothing
        for (SdkInstance instance : started) {
            assertThat(instance.count(Kind.REVOKED, 0)).as(instance.name()).isZero();
        }
        int logins = 0;
        for (String pid : concat(a, b, c)) {
            logins += world.platform.logins(pid).size();
        }
        assertThat(logins).isEqualTo(1000);
        Map<String, Integer> countsA = E2eWorld.counts(world.holders(A));
        assertThat(countsA.values()).containsOnly(100);
        // the database follows: one ADDED assignment row per PID
        await().atMost(E2eWorld.WAIT)
                .until(() -> world.leader.repositories().assignments().findAll().size() == 1000);
        world.timing("add 1,000 PIDs (3 batches) -> all held by 10 SDK instances", settledAt - addedAt);
    }

    @Test
    void twoInstancesJoiningMoveExactlyTheMinimalNumberOfPids() {
        world = new E2eWorld(zookeeper.getConnectString(), "e2e-join", 1);
        List<SdkInstance> old = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            old.add(world.instance(A, "old" + i));
        }
        world.awaitAnswered(old);
        List<String> pids = E2eWorld.pids("j", 400);
        world.leader.addPids(A, pids);
        world.awaitSettled(A, pids);
        Map<String, String> before = world.holders(A);
        List<Integer> counts = new ArrayList<>(E2eWorld.counts(before).values());
        int minimum = E2eWorld.minimalMoves(counts, 2);
        assertThat(minimum).isEqualTo(132); // 4 x 100 -> 4 x 67 + 2 x 66

        long joinAt = System.nanoTime();
        SdkInstance n1 = world.instance(A, "new0");
        SdkInstance n2 = world.instance(A, "new1");
        world.awaitSettled(A, pids);
        long settledAt = System.nanoTime();
        Map<String, String> after = world.holders(A);

        long moved = pids.stream()
                .filter(pid -> !before.get(pid).equals(after.get(pid)))
                .count();
        assertThat(moved).as("PIDs whose holder changed").isEqualTo(minimum);
        long revocations =
                old.stream().mapToLong(i -> i.count(Kind.REVOKED, joinAt)).sum();
        long grants = world.instances.stream()
                .mapToLong(i -> i.count(Kind.ASSIGNED, joinAt))
                .sum();
        assertThat(revocations).as("revocations after the join").isEqualTo(minimum);
        assertThat(grants).as("grants after the join").isEqualTo(minimum);
        assertThat(n1.count(Kind.REVOKED, 0) + n2.count(Kind.REVOKED, 0)).isZero();
        world.assertSafety();
        world.note("join of 2 to 4 x 100: moved (minimum)", moved + " (" + minimum + ")");
        world.timing("join -> balanced again", settledAt - joinAt);
    }

    @SafeVarargs
    private static List<String> concat(List<String>... lists) {
        List<String> all = new ArrayList<>();
        for (List<String> list : lists) {
            all.addAll(list);
        }
        return all;
    }
}
