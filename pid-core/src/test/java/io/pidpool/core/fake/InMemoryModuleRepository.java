package io.pidpool.core.fake;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.ModuleRepository;
import java.util.List;
import java.util.Optional;

/** {@link ModuleRepository} over an {@link InMemoryDatabase}. Thread-safe. */
public final class InMemoryModuleRepository implements ModuleRepository {
    private final InMemoryDatabase db;

    InMemoryModuleRepository(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public void put(ModuleConfig config) {
        Preconditions.requireNonNull(config, "module");
        db.write(() -> {
            db.bumpAccountVersion(java.util.List.of());
            db.modules.put(config.key(), config);
            return null;
        });
    }

    @Override
    public Optional<ModuleConfig> find(ModuleKey key) {
        Preconditions.requireNonNull(key, "module");
        return db.read(() -> db.modules.find(key));
    }

    @Override
    public List<ModuleConfig> findAll() {
        return db.read(db.modules::valuesList);
    }
}
