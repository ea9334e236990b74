package io.pidpool.server.jdbc;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.ModuleRepository;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/** {@link ModuleRepository} on tables {@code pool_module} and {@code pool_module_weight}. Thread-safe. */
final class JdbiModuleRepository implements ModuleRepository {
    private final JdbiSession session;
    private final Clock clock;

    JdbiModuleRepository(JdbiSession session, Clock clock) {
        this.session = session;
        this.clock = clock;
    }

    @Override
    public void put(ModuleConfig config) {
        Preconditions.requireNonNull(config, "module");
        String key = config.key().toString();
        session.write("module", h -> {
            AccountVersion.bump(h); // followers' warm accounts carry the modules too
            if (!update(h, config) && !session.attempt(h, x -> insert(x, config)) && !update(h, config)) {
                throw new IllegalStateException("module " + key + " neither updated nor inserted");
            }
            h.createUpdate("DELETE FROM pool_module_weight WHERE module_key = :key")
                    .bind("key", key)
                    .execute();
            var batch = h.prepareBatch(
                    "INSERT INTO pool_module_weight (module_key, instance_id, weight) VALUES (:key, :instance, :weight)");
            config.instanceWeights().forEach((instance, weight) -> batch.bind("key", key)
                    .bind("instance", instance.value())
                    .bind("weight", weight)
                    .add());
            if (batch.size() > 0) {
                batch.execute();
            }
            return null;
        });
    }

    private boolean update(Handle h, ModuleConfig config) {
        return h.createUpdate("UPDATE pool_module SET servers = :servers, monthly_demand = :demand,"
                                + " min_per_instance = :min, rebalance_delay_ms = :delay, updated_at = :now"
                                + " WHERE module_key = :key")
                        .bind("key", config.key().toString())
                        .bind("servers", config.servers())
                        .bind("demand", config.monthlyDemand())
                        .bind("min", config.minPerInstance())
                        .bindByType("delay", delayMs(config), Long.class)
                        .bind("now", Rows.toDb(clock.instant()))
                        .execute()
                == 1;
    }

    private void insert(Handle h, ModuleConfig config) {
        h.createUpdate("INSERT INTO pool_module (module_key, servers, monthly_demand, min_per_instance,"
                        + " rebalance_delay_ms, updated_at) VALUES (:key, :servers, :demand, :min, :delay, :now)")
                .bind("key", config.key().toString())
                .bind("servers", config.servers())
                .bind("demand", config.monthlyDemand())
                .bind("min", config.minPerInstance())
                .bindByType("delay", delayMs(config), Long.class)
                .bind("now", Rows.toDb(clock.instant()))
                .execute();
    }

    private static Long delayMs(ModuleConfig config) {
        return config.rebalanceDelay() == null ? null : config.rebalanceDelay().toMillis();
    }

    @Override
    public Optional<ModuleConfig> find(ModuleKey key) {
        Preconditions.requireNonNull(key, "module");
        return session.snapshot(h -> load(h, key).stream().findFirst());
    }

    @Override
    public List<ModuleConfig> findAll() {
        return session.snapshot(h -> load(h, null));
    }

    private static java.time.Duration delay(Long ms) {
        return ms == null ? null : java.time.Duration.ofMillis(ms);
    }

    /** Modules (one, or all when {@code key} is null) with their weights, ordered by key. */
    static List<ModuleConfig> load(Handle h, ModuleKey key) {
        String where = key == null ? "" : " WHERE module_key = :key";
        var weights = new HashMap<String, Map<InstanceId, Integer>>();
        var weightQuery = h.createQuery("SELECT module_key, instance_id, weight FROM pool_module_weight" + where);
        var moduleQuery = h.createQuery(
                "SELECT module_key, servers, monthly_demand, min_per_instance, rebalance_delay_ms FROM pool_module"
                        + where);
        if (key != null) {
            weightQuery.bind("key", key.toString());
            moduleQuery.bind("key", key.toString());
        }
        weightQuery
                .map((rs, ctx) -> {
                    weights.computeIfAbsent(rs.getString("module_key"), k -> new HashMap<>())
                            .put(InstanceId.of(rs.getString("instance_id")), rs.getInt("weight"));
                    return 0;
                })
                .list();
        var modules = new ArrayList<>(moduleQuery
                .map((rs, ctx) -> new ModuleConfig(
                        ModuleKey.parse(rs.getString("module_key")),
                        rs.getInt("servers"),
                        rs.getLong("monthly_demand"),
                        rs.getInt("min_per_instance"),
                        weights.getOrDefault(rs.getString("module_key"), Map.of()),
                        delay(rs.getObject("rebalance_delay_ms", Long.class))))
                .list());
        modules.sort(Comparator.comparing(ModuleConfig::key));
        return List.copyOf(modules);
    }
}
