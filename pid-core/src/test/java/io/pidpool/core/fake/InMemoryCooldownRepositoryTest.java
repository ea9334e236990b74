package io.pidpool.core.fake;

import io.pidpool.core.contract.CooldownRepositoryContract;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.core.port.Repositories;
import java.time.Clock;

class InMemoryCooldownRepositoryTest extends CooldownRepositoryContract {
    @Override
    protected Repositories newRepositories(Clock clock) {
        return new InMemoryDatabase(clock).repositories();
    }

    @Override
    protected CooldownRepository newCooldowns(Repositories repos) {
        return new InMemoryCooldownRepository(repos.pids());
    }
}
