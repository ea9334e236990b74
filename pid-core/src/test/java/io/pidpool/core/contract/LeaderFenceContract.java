package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.port.LeaderFence;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** What every {@link LeaderFence} does, with the repositories of the same store. */
public abstract class LeaderFenceContract extends RepositoryContract {
    private LeaderFence fence() {
        return repos.fence();
    }

    @Test
    void noEpochUntilALeaderRaisesItThenOnlyUpwards() {
        assertThat(fence().current()).isEqualTo(io.pidpool.core.model.Epoch.NONE);

        fence().raise(E2);
        fence().raise(E2); // the same again changes nothing

        expectError(ErrorCode.FENCED, "epoch", () -> fence().raise(E1));
        assertThat(fence().current()).isEqualTo(E2);
        fence().raise(E3);
        assertThat(fence().current()).isEqualTo(E3);
    }

    @Test
    void aCheckPassesOnlyForTheStoredEpoch() {
        expectError(ErrorCode.FENCED, "epoch", () -> fence().check(E1)); // never raised
        fence().raise(E1);
        fence().check(E1);
        fence().raise(E2);
        expectError(ErrorCode.FENCED, "epoch", () -> fence().check(E1));
        expectError(ErrorCode.FENCED, "epoch", () -> fence().check(E3));
        fence().check(E2);
    }

    @Test
    void aWriteUnderAnOlderEpochIsRefusedAndChangesNothing() {
        givenModules(FIN, OPS);
        repos.pids().insert(pid("u1", FIN));
        fence().raise(E1); // leader A
        fence().raise(E2); // leader B supersedes it
        repos.transactor().useTransaction(() -> {
            repos.pids().update(pid("u1", OPS)); // B migrates u1
            fence().check(E2);
        });

        expectError(ErrorCode.FENCED, "epoch", () -> repos.transactor().useTransaction(() -> {
            repos.pids().update(pid("u1", FIN)); // A, paused before, writes what it knew
            fence().check(E1);
        }));

        assertThat(repos.pids().find("u1").orElseThrow().module()).isEqualTo(OPS);
        assertThat(fence().current()).isEqualTo(E2);
    }

    @Test
    void aRaiseWaitsForTheUnitThatCheckedBeforeIt() throws Exception {
        givenModules(FIN);
        fence().raise(E1);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            CountDownLatch checked = new CountDownLatch(1);
            CountDownLatch commit = new CountDownLatch(1);
            CompletableFuture<Void> leaderA = CompletableFuture.runAsync(
                    () -> repos.transactor().useTransaction(() -> {
                        repos.pids().insert(pid("u1", FIN));
                        fence().check(E1);
                        checked.countDown();
                        await(commit); // between the check and the commit
                    }),
                    threads);
            assertThat(checked.await(10, TimeUnit.SECONDS)).isTrue();

            CompletableFuture<Void> leaderB = CompletableFuture.runAsync(() -> fence().raise(E2), threads);
            assertThat(catchTimeout(leaderB)).as("the raise waits for A's unit").isTrue();
            commit.countDown();

            leaderA.get(10, TimeUnit.SECONDS); // A checked first: its unit commits
            leaderB.get(10, TimeUnit.SECONDS);
            assertThat(repos.pids().findAll(List.of("u1"))).hasSize(1);
            expectError(ErrorCode.FENCED, "epoch", () -> fence().check(E1));
        } finally {
            threads.shutdownNow();
        }
    }

    private static boolean catchTimeout(CompletableFuture<Void> future) throws Exception {
        try {
            future.get(300, TimeUnit.MILLISECONDS);
            return false;
        } catch (TimeoutException expected) {
            return true;
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never let the unit commit");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
