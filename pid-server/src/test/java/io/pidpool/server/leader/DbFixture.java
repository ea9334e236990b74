package io.pidpool.server.leader;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import io.pidpool.server.testing.TestCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A database view for unit tests. */
final class DbFixture {
    final List<ModuleConfig> modules = new ArrayList<>();
    final List<PidRecord> pids = new ArrayList<>();

    static AccountPayload payload(String pid) {
        return new AccountPayload(10_000, 0, TestCluster.secret(pid), Map.of());
    }

    static PidRecord account(ModuleKey module, String pid) {
        return new PidRecord(pid, module, 10_000, 0, PidAvailability.ACTIVE, TestCluster.secret(pid), Map.of());
    }

    DbFixture module(ModuleKey key, int servers, String... pidIds) {
        modules.add(ModuleConfig.of(key, servers));
        for (String pid : pidIds) {
            pids.add(account(key, pid));
        }
        return this;
    }

    DbView view() {
        DbView view = new DbView();
        view.load(new LeaderDatabase.Snapshot(modules, pids, List.of()));
        return view;
    }
}
