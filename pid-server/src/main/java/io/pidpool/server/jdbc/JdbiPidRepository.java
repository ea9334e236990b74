package io.pidpool.server.jdbc;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.PidRepository;
import io.pidpool.core.port.PidWithModule;
import io.pidpool.core.port.StorageLimits;
import java.time.Clock;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.jdbi.v3.core.Handle;

/**
 * {@link PidRepository} on tables {@code pool_pid} and {@code pool_pid_attribute}. Checks run
 * inside the write transaction before any row changes, so the usual errors name the offending ids;
 * the constraints catch what races past them. Thread-safe.
 */
final class JdbiPidRepository implements PidRepository {
    private static final String COLUMNS =
            "p.pid_id, p.module_key, p.monthly_quota, p.overage_allowance, p.status, p.sealed_secret";

    private final JdbiSession session;
    private final Clock clock;

    JdbiPidRepository(JdbiSession session, Clock clock) {
        this.session = session;
        this.clock = clock;
    }

    @Override
    public void insertAll(Collection<PidRecord> pids) {
        List<PidRecord> list = List.copyOf(Preconditions.requireNonNull(pids, "pids"));
        list.forEach(StorageLimits::requireStorable);
        if (list.isEmpty()) {
            return;
        }
        session.write("pid.id", h -> {
            long version = AccountVersion.bump(h);
            var seen = new HashSet<String>();
            for (PidRecord pid : list) {
                if (!seen.add(pid.id())) {
                    throw PidPoolException.conflict("pid.id", "PID %s appears twice", pid.id());
                }
            }
            Set<String> existing = existingIds(h, seen);
            if (!existing.isEmpty()) {
                throw PidPoolException.conflict("pid.id", "PIDs already exist: %s", String.join(", ", existing));
            }
            requireModules(h, list);
            LocalDateTime now = Rows.toDb(clock.instant());
            var rows = h.prepareBatch("INSERT INTO pool_pid (pid_id, module_key, monthly_quota, overage_allowance,"
                    + " status, sealed_secret, created_at, updated_at)"
                    + " VALUES (:id, :module, :quota, :allowance, :status, :secret, :now, :now)");
            for (PidRecord pid : list) {
                bindRow(rows, pid).bind("now", now).add();
                if (rows.size() >= Rows.CHUNK) {
                    rows.execute();
                }
            }
            if (rows.size() > 0) {
                rows.execute();
            }
            insertAttributes(h, list);
            AccountVersion.logChanged(
                    h, version, list.stream().map(PidRecord::id).toList());
            return null;
        });
    }

    @Override
    public void updateAll(Collection<PidRecord> pids) {
        List<PidRecord> list = List.copyOf(Preconditions.requireNonNull(pids, "pids"));
        list.forEach(StorageLimits::requireStorable);
        List<String> ids = list.stream().map(PidRecord::id).toList();
        requireDistinct(ids);
        if (list.isEmpty()) {
            return;
        }
        session.write("pid.id", h -> {
            long version = AccountVersion.bump(h);
            requireExisting(h, ids);
            requireModules(h, list);
            LocalDateTime now = Rows.toDb(clock.instant());
            var rows = h.prepareBatch("UPDATE pool_pid SET module_key = :module, monthly_quota = :quota,"
                    + " overage_allowance = :allowance, status = :status, sealed_secret = :secret, updated_at = :now"
                    + " WHERE pid_id = :id");
            for (PidRecord pid : list) {
                bindRow(rows, pid).bind("now", now).add();
                if (rows.size() >= Rows.CHUNK) {
                    rows.execute();
                }
            }
            if (rows.size() > 0) {
                rows.execute();
            }
            deleteAttributes(h, ids);
            insertAttributes(h, list);
            AccountVersion.logChanged(h, version, ids);
            return null;
        });
    }

    @Override
    public void deleteAll(Collection<String> ids) {
        List<String> list = List.copyOf(Preconditions.requireNonNull(ids, "pids"));
        list.forEach(id -> Names.requirePidId(id, "pid.id"));
        requireDistinct(list);
        if (list.isEmpty()) {
            return;
        }
        session.write("pid.id", h -> {
            long version = AccountVersion.bump(h);
            requireExisting(h, list);
            for (List<String> chunk : Rows.chunks(list)) {
                // attributes and assignment rows go with ON DELETE CASCADE
                Rows.bindAll(
                                h.createUpdate("DELETE FROM pool_pid WHERE pid_id IN ("
                                        + Rows.params("id", chunk.size()) + ")"),
                                "id",
                                chunk)
                        .execute();
            }
            AccountVersion.logChanged(h, version, list);
            return null;
        });
    }

    @Override
    public Optional<PidRecord> find(String id) {
        Names.requirePidId(id, "pid.id");
        return session.snapshot(
                h -> select(h, "p.pid_id = :id", Map.of("id", id)).stream().findFirst());
    }

    @Override
    public Map<String, ModuleKey> modulesOf(Collection<String> ids) {
        var wanted = new TreeSet<String>(Preconditions.requireNonNull(ids, "pids"));
        wanted.forEach(id -> Names.requirePidId(id, "pid.id"));
        Map<String, ModuleKey> modules = new HashMap<>();
        if (wanted.isEmpty()) {
            return modules;
        }
        session.snapshot(h -> {
            for (List<String> chunk : Rows.chunks(wanted)) {
                Rows.bindAll(
                                h.createQuery("SELECT pid_id, module_key FROM pool_pid WHERE pid_id IN ("
                                        + Rows.params("p", chunk.size()) + ")"),
                                "p",
                                chunk)
                        .map((rs, ctx) -> modules.put(rs.getString(1), ModuleKey.parse(rs.getString(2))))
                        .list();
            }
            return null;
        });
        return modules;
    }

    @Override
    public List<PidRecord> findAll(Collection<String> ids) {
        var wanted = new TreeSet<String>(Preconditions.requireNonNull(ids, "pids"));
        wanted.forEach(id -> Names.requirePidId(id, "pid.id"));
        if (wanted.isEmpty()) {
            return List.of();
        }
        return session.snapshot(h -> {
            var found = new ArrayList<PidRecord>();
            for (List<String> chunk : Rows.chunks(wanted)) {
                var params = new HashMap<String, Object>();
                for (int i = 0; i < chunk.size(); i++) {
                    params.put("id" + i, chunk.get(i));
                }
                found.addAll(select(h, "p.pid_id IN (" + Rows.params("id", chunk.size()) + ")", params));
            }
            found.sort(Comparator.comparing(PidRecord::id));
            return List.copyOf(found);
        });
    }

    @Override
    public List<PidRecord> findByModule(ModuleKey module) {
        Preconditions.requireNonNull(module, "module");
        return session.snapshot(h -> select(h, "p.module_key = :module", Map.of("module", module.toString())));
    }

    @Override
    public List<PidWithModule> loadPidWithModule() {
        return session.snapshot(h -> {
            List<ModuleConfig> modules = JdbiModuleRepository.load(h, null);
            var byModule = new HashMap<ModuleKey, List<PidRecord>>();
            for (PidRecord pid : select(h, null, Map.of())) {
                byModule.computeIfAbsent(pid.module(), m -> new ArrayList<>()).add(pid);
            }
            return modules.stream()
                    .map(m -> new PidWithModule(m, byModule.getOrDefault(m.key(), List.of())))
                    .toList();
        });
    }

    @Override
    public AccountSnapshot loadAccounts() {
        return session.snapshot(h -> {
            long version = AccountVersion.read(h).version();
            List<ModuleConfig> modules = JdbiModuleRepository.load(h, null);
            return new AccountSnapshot(version, modules, lean(h, null, List.of()));
        });
    }

    @Override
    public Optional<AccountChanges> changesSince(long version) {
        return session.snapshot(h -> {
            AccountVersion.State now = AccountVersion.read(h);
            if (version < 0 || version > now.version() || version + 1 < now.prunedBelow()) {
                return Optional.empty(); // not a version of this store, or its log entries are pruned
            }
            if (version == now.version()) { // the followers' poll: one read of the version row
                return Optional.of(new AccountChanges(version, version, List.of(), List.of(), Set.of()));
            }
            List<ModuleConfig> modules = JdbiModuleRepository.load(h, null);
            Set<String> ids = new TreeSet<>(
                    h.createQuery("SELECT DISTINCT pid_id FROM pool_account_change WHERE change_version > :v")
                            .bind("v", version)
                            .mapTo(String.class)
                            .list());
            List<PidRecord> changed = new ArrayList<>();
            for (List<String> chunk : Rows.chunks(ids)) {
                changed.addAll(lean(h, "p.pid_id IN (" + Rows.params("id", chunk.size()) + ")", chunk));
            }
            Set<String> removed = new TreeSet<>(ids);
            changed.forEach(p -> removed.remove(p.id()));
            return Optional.of(new AccountChanges(version, now.version(), modules, changed, removed));
        });
    }

    @Override
    public void pruneChanges(long keepVersions) {
        Preconditions.requireArgument(keepVersions >= 0, "keepVersions", "must be >= 0, was %d", keepVersions);
        session.write(null, h -> {
            AccountVersion.prune(h, keepVersions);
            return null;
        });
    }

    /**
     * The leader's bulk read: accounts matching {@code where} (on alias {@code p}, binding {@code ids}
     * as {@code :id0, :id1, ...}), in no particular order. Unlike {@link #select} it maps by column
     * index with no per-row name lookups, shares one {@link ModuleKey} per module and one empty
     * attribute map, and neither sorts nor copies the result: at 100,000 accounts this is the part of
     * a new leader's start that waits for the database.
     */
    private static List<PidRecord> lean(Handle h, String where, List<String> ids) {
        String filter = where == null ? "" : " WHERE " + where;
        var attributes = new HashMap<String, Map<String, String>>();
        Rows.bindAll(
                        h.createQuery("SELECT a.pid_id, a.attr_name, a.attr_value FROM pool_pid_attribute a"
                                + (where == null ? "" : " JOIN pool_pid p ON p.pid_id = a.pid_id" + filter)),
                        "id",
                        ids)
                .map((rs, ctx) -> attributes
                        .computeIfAbsent(rs.getString(1), k -> new HashMap<>())
                        .put(rs.getString(2), rs.getString(3)))
                .list();
        var modules = new HashMap<String, ModuleKey>();
        return Rows.bindAll(h.createQuery("SELECT " + COLUMNS + " FROM pool_pid p" + filter), "id", ids)
                .setFetchSize(1_000)
                .map((rs, ctx) -> {
                    String id = rs.getString(1);
                    return new PidRecord(
                            id,
                            modules.computeIfAbsent(rs.getString(2), ModuleKey::parse),
                            rs.getLong(3),
                            rs.getLong(4),
                            PidAvailability.valueOf(rs.getString(5)),
                            SealedSecret.decode(rs.getString(6)),
                            attributes.getOrDefault(id, Map.of()));
                })
                .list();
    }

    /** Accounts matching {@code where} (on alias {@code p}), attributes included, ordered by id. */
    private static List<PidRecord> select(Handle h, String where, Map<String, ?> params) {
        String filter = where == null ? "" : " WHERE " + where;
        var attributes = new HashMap<String, Map<String, String>>();
        var attributeQuery = h.createQuery("SELECT a.pid_id, a.attr_name, a.attr_value FROM pool_pid_attribute a"
                        + " JOIN pool_pid p ON p.pid_id = a.pid_id" + filter)
                .bindMap(params);
        attributeQuery
                .map((rs, ctx) -> attributes
                        .computeIfAbsent(rs.getString("pid_id"), k -> new HashMap<>())
                        .put(rs.getString("attr_name"), rs.getString("attr_value")))
                .list();
        var pids = new ArrayList<>(h.createQuery("SELECT " + COLUMNS + " FROM pool_pid p" + filter)
                .bindMap(params)
                .map((rs, ctx) -> new PidRecord(
                        rs.getString("pid_id"),
                        ModuleKey.parse(rs.getString("module_key")),
                        rs.getLong("monthly_quota"),
                        rs.getLong("overage_allowance"),
                        PidAvailability.valueOf(rs.getString("status")),
                        SealedSecret.decode(rs.getString("sealed_secret")),
                        attributes.getOrDefault(rs.getString("pid_id"), Map.of())))
                .list());
        pids.sort(Comparator.comparing(PidRecord::id));
        return List.copyOf(pids);
    }

    private static org.jdbi.v3.core.statement.PreparedBatch bindRow(
            org.jdbi.v3.core.statement.PreparedBatch rows, PidRecord pid) {
        return rows.bind("id", pid.id())
                .bind("module", pid.module().toString())
                .bind("quota", pid.monthlyQuota())
                .bind("allowance", pid.overageAllowance())
                .bind("status", pid.status().name())
                .bind("secret", pid.secret().encode());
    }

    private static void insertAttributes(Handle h, List<PidRecord> pids) {
        var rows = h.prepareBatch(
                "INSERT INTO pool_pid_attribute (pid_id, attr_name, attr_value) VALUES (:id, :name, :value)");
        for (PidRecord pid : pids) {
            for (Map.Entry<String, String> attribute : pid.attributes().entrySet()) {
                rows.bind("id", pid.id())
                        .bind("name", attribute.getKey())
                        .bind("value", attribute.getValue())
                        .add();
                if (rows.size() >= Rows.CHUNK) {
                    rows.execute();
                }
            }
        }
        if (rows.size() > 0) {
            rows.execute();
        }
    }

    private static void deleteAttributes(Handle h, List<String> ids) {
        for (List<String> chunk : Rows.chunks(ids)) {
            Rows.bindAll(
                            h.createUpdate("DELETE FROM pool_pid_attribute WHERE pid_id IN ("
                                    + Rows.params("id", chunk.size()) + ")"),
                            "id",
                            chunk)
                    .execute();
        }
    }

    /** Which of {@code ids} exist, sorted. */
    private static Set<String> existingIds(Handle h, Collection<String> ids) {
        var existing = new TreeSet<String>();
        for (List<String> chunk : Rows.chunks(ids)) {
            existing.addAll(Rows.bindAll(
                            h.createQuery("SELECT pid_id FROM pool_pid WHERE pid_id IN ("
                                    + Rows.params("id", chunk.size()) + ")"),
                            "id",
                            chunk)
                    .mapTo(String.class)
                    .list());
        }
        return existing;
    }

    private static void requireExisting(Handle h, List<String> ids) {
        Set<String> existing = existingIds(h, ids);
        var missing = new TreeSet<String>(ids);
        missing.removeAll(existing);
        if (!missing.isEmpty()) {
            throw PidPoolException.notFound("pid.id", "PIDs do not exist: %s", String.join(", ", missing));
        }
    }

    private static void requireModules(Handle h, List<PidRecord> pids) {
        var wanted = new LinkedHashSet<String>();
        pids.forEach(pid -> wanted.add(pid.module().toString()));
        var known = new HashSet<String>();
        for (List<String> chunk : Rows.chunks(wanted)) {
            known.addAll(Rows.bindAll(
                            h.createQuery("SELECT module_key FROM pool_module WHERE module_key IN ("
                                    + Rows.params("m", chunk.size()) + ")"),
                            "m",
                            chunk)
                    .mapTo(String.class)
                    .list());
        }
        for (PidRecord pid : pids) {
            if (!known.contains(pid.module().toString())) {
                throw PidPoolException.notFound("pid.module", "module %s does not exist", pid.module());
            }
        }
    }

    private static void requireDistinct(List<String> ids) {
        var seen = new HashSet<String>();
        for (String id : ids) {
            Preconditions.requireArgument(seen.add(id), "pid.id", "PID %s appears twice", id);
        }
    }
}
