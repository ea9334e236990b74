package io.pidpool.server.leader;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The leader's database view (the {@code pidWithModule}): every module's configuration and
 * every account. Loaded whole at election and on every reconciliation pass, changed in between only
 * by {@link #replay(DbChange)} of changes the database has committed. A follower keeps one warm
 * ({@link WarmAccounts}) together with its account version, so that a new leader can prove it current
 * with {@link #apply(AccountChanges)} instead of loading every account.
 *
 * <p>Concurrency: not thread-safe; owned by the leader's serial executor.
 */
public final class DbView {
    private Map<String, PidRecord> pids = new HashMap<>();
    private Map<ModuleKey, ModuleConfig> modules = new TreeMap<>();
    /** {@link #moduleKeys()}, computed once per change (it looks at every account). */
    private Set<ModuleKey> moduleKeys;
    /**
     * The account version this view is current at ({@link AccountSnapshot#version()}), or
     * {@link AccountSnapshot#UNVERSIONED} once anything unversioned went in (a plain load, a replay).
     */
    private long version = AccountSnapshot.UNVERSIONED;

    public void load(LeaderDatabase.Snapshot snapshot) {
        fill(snapshot.modules(), snapshot.pids());
        version = AccountSnapshot.UNVERSIONED;
    }

    /** Replaces everything with {@code snapshot} and remembers its version. */
    public void load(AccountSnapshot snapshot) {
        fill(snapshot.modules(), snapshot.pids());
        version = snapshot.version();
    }

    private void fill(List<ModuleConfig> moduleList, List<PidRecord> pidList) {
        moduleKeys = null;
        pids = new HashMap<>(Math.max(16, pidList.size() * 4 / 3 + 1));
        modules = new TreeMap<>();
        moduleList.forEach(m -> modules.put(m.key(), m));
        pidList.forEach(p -> pids.put(p.id(), p));
    }

    /**
     * Brings a view of version {@code changes.since()} to {@code changes.version()}.
     *
     * @throws IllegalStateException if this view is not at {@code changes.since()}: changes of another
     *     version would leave it neither old nor current
     */
    public void apply(AccountChanges changes) {
        if (version == AccountSnapshot.UNVERSIONED || version != changes.since()) {
            throw new IllegalStateException(
                    "changes since version " + changes.since() + " do not apply to a view of version " + version);
        }
        if (changes.none()) {
            return;
        }
        moduleKeys = null;
        modules.clear();
        changes.modules().forEach(m -> modules.put(m.key(), m));
        changes.changed().forEach(p -> pids.put(p.id(), p));
        changes.removed().forEach(pids::remove);
        version = changes.version();
    }

    /** Takes over {@code other}'s content (no copy); {@code other} is left empty and unversioned. */
    public void takeOver(DbView other) {
        pids = other.pids;
        modules = other.modules;
        moduleKeys = null;
        version = other.version;
        other.pids = new HashMap<>();
        other.modules = new TreeMap<>();
        other.moduleKeys = null;
        other.version = AccountSnapshot.UNVERSIONED;
    }

    /** See {@link #version}. */
    public long version() {
        return version;
    }

    public void replay(DbChange change) {
        moduleKeys = null;
        // a change this view was told about, not one read at a version: the version no longer says
        // what the view holds (the next term start loads, or proves a follower's view, on its own)
        version = AccountSnapshot.UNVERSIONED;
        if (change instanceof DbChange.PidPut put) {
            pids.put(put.pid().id(), put.pid());
        } else if (change instanceof DbChange.PidRemoved removed) {
            pids.remove(removed.pidId());
        } else if (change instanceof DbChange.ModulePut put) {
            modules.put(put.config().key(), put.config());
        }
    }

    public PidRecord pid(String id) {
        return pids.get(id);
    }

    public Map<String, PidRecord> pids() {
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
    public static AccountPayload payload(PidRecord account) {
        return new AccountPayload(
                account.monthlyQuota(), account.overageAllowance(), account.secret(), account.attributes());
    }

    /**
     * Whether {@code payload} is {@link #payload(PidRecord)} of {@code account}, without building it
     * (a full pass asks this for every held PID).
     */
    public static boolean carries(PidRecord account, AccountPayload payload) {
        return payload != null
                && account.monthlyQuota() == payload.monthlyQuota()
                && account.overageAllowance() == payload.overageAllowance()
                && account.secret().equals(payload.secret())
                && account.attributes().equals(payload.attributes());
    }
}
