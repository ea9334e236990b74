package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.fake.InMemoryDatabase;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.testing.ManualTicker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link WarmAccounts} driven by hand (its own thread is never started here). */
class WarmAccountsTest {
    static final ModuleKey A = ModuleKey.parse("fin#warm#test");

    final Repositories repos = InMemoryDatabase.create().repositories();
    final ManualTicker ticker = new ManualTicker();
    final WarmAccounts warm =
            new WarmAccounts(new RepositoryLeaderStore(repos), Duration.ofMillis(250), ticker, "test");

    @AfterEach
    void close() {
        warm.close();
    }

    static PidRecord pid(String id, long quota) {
        return new PidRecord(id, A, quota, 0, PidAvailability.ACTIVE, new SealedSecret("k", id.getBytes()), Map.of());
    }

    @Test
    void followsTheStoreByItsChangesAndHandsTheCopyOverOnce() {
        repos.modules().put(ModuleConfig.of(A, 1));
        repos.pids().insertAll(List.of(pid("a", 1), pid("b", 1)));
        warm.refresh();
        long loaded = warm.version();
        assertThat(loaded).isEqualTo(repos.pids().loadAccounts().version());

        repos.pids().update(pid("a", 2));
        repos.pids().deleteAll(List.of("b"));
        warm.refresh();

        assertThat(warm.version()).isEqualTo(loaded + 2);
        DbView taken = warm.take().orElseThrow();
        assertThat(taken.pids()).containsOnlyKeys("a");
        assertThat(taken.pid("a").monthlyQuota()).isEqualTo(2);
        // taken: nothing more is applied to it, and nothing is loaded until the node follows again
        repos.pids().insert(pid("c", 1));
        warm.refresh();
        assertThat(taken.pids()).containsOnlyKeys("a");
        assertThat(warm.take()).isEmpty();
    }

    @Test
    void aNodeWhoseTermEndedWaitsBeforeLoadingEverythingAgain() {
        repos.modules().put(ModuleConfig.of(A, 1));
        repos.pids().insert(pid("a", 1));
        warm.take(); // this node leads
        warm.resume(); // and follows again

        warm.refresh();
        assertThat(warm.version()).as("no load right after the term").isEqualTo(-1);

        ticker.advance(WarmAccounts.RESUME_DELAY);
        warm.refresh();
        assertThat(warm.version()).isEqualTo(repos.pids().loadAccounts().version());
    }
}
