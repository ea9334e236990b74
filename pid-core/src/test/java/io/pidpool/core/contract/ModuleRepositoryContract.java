package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.ModuleRepository;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What every {@link ModuleRepository} does. */
public abstract class ModuleRepositoryContract extends RepositoryContract {

    @Test
    void putThenFindReturnsTheWholeConfig() {
        var config = new ModuleConfig(FIN, 4, 200_000, 2, Map.of(I1, 3, I2, 1));
        repos.modules().put(config);

        assertThat(repos.modules().find(FIN)).contains(config);
        assertThat(repos.modules().find(OPS)).isEmpty();
    }

    @Test
    void putReplacesTheWholeConfigIncludingWeights() {
        repos.modules().put(new ModuleConfig(FIN, 4, 200_000, 2, Map.of(I1, 3, I2, 1)));
        var replaced = new ModuleConfig(FIN, 6, 90_000, 0, Map.of(I2, 5));

        repos.modules().put(replaced);

        assertThat(repos.modules().find(FIN)).contains(replaced);
        assertThat(repos.modules().findAll()).containsExactly(replaced);
    }

    @Test
    void findAllOrdersByKeyAndKeysAreCaseSensitive() {
        ModuleKey upper = ModuleKey.parse("FIN#risk#scorer");
        ModuleKey dashed = ModuleKey.parse("fin-x#risk#scorer");
        for (ModuleKey key : new ModuleKey[] {OPS, FIN, dashed, upper}) {
            repos.modules().put(ModuleConfig.of(key, 2));
        }

        assertThat(repos.modules().findAll()).extracting(ModuleConfig::key).containsExactly(upper, FIN, dashed, OPS);
    }
}
