package io.pidpool.core.port;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import java.util.List;
import java.util.Optional;

/**
 * The modules an operator has configured, with their server count, demand and instance weights.
 * A PID can only belong to a module stored here. Thread-safe.
 */
public interface ModuleRepository {
    /** Creates the module or replaces its whole configuration (weights included). */
    void put(ModuleConfig config);

    Optional<ModuleConfig> find(ModuleKey key);

    /** Every module, ordered by {@link ModuleKey#compareTo}. */
    List<ModuleConfig> findAll();
}
