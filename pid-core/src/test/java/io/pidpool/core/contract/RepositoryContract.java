package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.testing.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;

/** Base of every repository contract: a manual clock, fresh repositories per test, sample values. */
public abstract class RepositoryContract {
    protected static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");
    protected static final ModuleKey OPS = ModuleKey.parse("ops#monitor#collector");
    protected static final InstanceId I1 = InstanceId.of("host-1");
    protected static final InstanceId I2 = InstanceId.of("host-2");
    protected static final Epoch E1 = new Epoch(1);
    protected static final Epoch E2 = new Epoch(2);
    protected static final Epoch E3 = new Epoch(3);

    protected final ManualClock clock = ManualClock.at("2025-07-09T08:00:00.123Z");
    protected Repositories repos;

    /**
     * Fresh, empty repositories whose stored timestamps come from {@code clock}. Called before every
     * test.
     */
    protected abstract Repositories newRepositories(Clock clock);

    @BeforeEach
    final void freshRepositories() {
        repos = newRepositories(clock);
    }

    protected static SealedSecret secret(String seed) {
        return new SealedSecret("k1", ("sealed:" + seed).getBytes(StandardCharsets.UTF_8));
    }

    protected static PidRecord pid(String id, ModuleKey module) {
        return new PidRecord(id, module, 10_000, 500, PidAvailability.ACTIVE, secret(id), Map.of("region", "cn-east"));
    }

    protected void givenModules(ModuleKey... keys) {
        for (ModuleKey key : keys) {
            repos.modules().put(ModuleConfig.of(key, 4));
        }
    }

    /** Runs {@code call}, expecting a {@link PidPoolException} with this code and field. */
    protected static PidPoolException expectError(ErrorCode code, String field, ThrowingCallable call) {
        Throwable thrown = catchThrowable(call);
        assertThat(thrown).as("expected %s on %s", code, field).isInstanceOf(PidPoolException.class);
        PidPoolException e = (PidPoolException) thrown;
        assertThat(e.code()).as("code of: %s", e.getMessage()).isEqualTo(code);
        assertThat(e.field()).as("field of: %s", e.getMessage()).isEqualTo(field);
        return e;
    }
}
