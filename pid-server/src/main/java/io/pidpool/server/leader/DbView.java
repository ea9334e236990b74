package io.pidpool.server.leader;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAccount;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The leader's database view (seed 000's {@code pidWithModule}): every module's configuration and
 * every account. Loaded whole at election and on every reconciliation pass, changed in between only
 * by {@link #replay(DbChange)} of changes the database has committed.
 *
 * <p>Concurrency: not thread-safe; owned by the leader's serial executor.
 */
public final class DbView {
    private final Map<String, PidAccount> pids = new HashMap<>();
    private final Map<ModuleKey, ModuleConfig> modules = new TreeMap<>();
    /** {@link #moduleKeys()}, computed once per change (it looks at every account). */
    private Set<ModuleKey> moduleKeys;

    public void load(LeaderStore.Snapshot snapshot) {
        moduleKeys = null;
        pids.clear();
        modules.clear();
        snapshot.modules().forEach(m -> modules.put(m.key(), m));
        snapshot.pids().forEach(p -> pids.put(p.id(), p));
    }

    public void replay(DbChange change) {
        moduleKeys = null;
        if (change instanceof DbChange.PidPut put) {
            pids.put(put.pid().id(), put.pid());
        } else if (change instanceof DbChange.PidRemoved removed) {
            pids.remove(removed.pidId());
        } else if (change instanceof DbChange.ModulePut put) {
            modules.put(put.config().key(), put.config());
        }
    }

    public PidAccount pid(String id) {
        return pids.get(id);
    }

    public Map<String, PidAccount> pids() {
        return pids;
    }

    /** The module's configuration, or the default (one server) if only its PIDs name it. */
    public ModuleConfig config(ModuleKey key) {
        ModuleConfig config = modules.get(key);
        return config != null ? config : ModuleConfig.of(key, 1);
    }

    /** Whether the database has a configuration row for the module. */
    public boolean configured(ModuleKey key) {
        return modules.containsKey(key);
    }

    /** Configured modules and modules named by an account. */
    public Set<ModuleKey> moduleKeys() {
        if (moduleKeys == null) {
            Set<ModuleKey> keys = new TreeSet<>(modules.keySet());
            pids.values().forEach(p -> keys.add(p.module()));
            moduleKeys = Collections.unmodifiableSet(keys);
        }
        return moduleKeys;
    }

    /** The account as PID nodes carry it: everything but the secret in clear, the secret sealed. */
    public static AccountPayload payload(PidAccount account) {
        return new AccountPayload(
                account.monthlyQuota(), account.overageAllowance(), account.secret(), account.attributes());
    }
}
