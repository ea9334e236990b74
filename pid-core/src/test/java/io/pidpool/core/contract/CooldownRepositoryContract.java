package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.core.port.Repositories;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every {@link CooldownRepository} does. */
public abstract class CooldownRepositoryContract extends RepositoryContract {
    private CooldownRepository cooldowns;

    /** The cooldown store beside {@code repos} (the same database). */
    protected abstract CooldownRepository newCooldowns(Repositories repos);

    @BeforeEach
    void twoPids() {
        givenModules(FIN);
        repos.pids().insertAll(List.of(pid("u1", FIN), pid("u2", FIN)));
        cooldowns = newCooldowns(repos);
    }

    private Cooldown cooldown(String pid, Duration length, String cause) {
        Instant now = clock.instant();
        return new Cooldown(pid, now.plus(length), cause, now);
    }

    @Test
    void putThenFindOrderedByPidWithMillisecondTimes() {
        var two = cooldown("u2", Duration.ofMinutes(10), "LOGIN_CONFLICT (second terminal) reported by host-1");
        var one = cooldown("u1", Duration.ofSeconds(90), "failed 3 times");
        cooldowns.put(two);
        cooldowns.put(one);

        assertThat(cooldowns.findAll()).containsExactly(one, two);
        assertThat(one.startedAt()).isEqualTo(Instant.parse("2025-07-09T08:00:00.123Z"));
    }

    @Test
    void putAgainReplacesTheEndTime() {
        cooldowns.put(cooldown("u1", Duration.ofMinutes(10), "first"));
        var longer = cooldown("u1", Duration.ofHours(1), "second");

        cooldowns.put(longer);

        assertThat(cooldowns.findAll()).containsExactly(longer);
    }

    @Test
    void removeEndsItOnce() {
        cooldowns.put(cooldown("u1", Duration.ofMinutes(10), "x"));

        assertThat(cooldowns.remove("u1")).isTrue();
        assertThat(cooldowns.remove("u1")).isFalse();
        assertThat(cooldowns.findAll()).isEmpty();
    }

    @Test
    void anUnknownPidIsNotFoundAndChangesNothing() {
        expectError(ErrorCode.NOT_FOUND, "pid.id", () -> cooldowns.put(cooldown("nope", Duration.ofMinutes(1), "")));
        assertThat(cooldowns.findAll()).isEmpty();
    }

    @Test
    void aLongCauseIsCutAndADeletedPidTakesItsCooldownAlong() {
        var cut = cooldown("u1", Duration.ofMinutes(1), "x".repeat(Cooldown.MAX_CAUSE + 10));
        cooldowns.put(cut);
        cooldowns.put(cooldown("u2", Duration.ofMinutes(1), "y"));
        assertThat(cooldowns.findAll().get(0).cause()).hasSize(Cooldown.MAX_CAUSE);

        repos.pids().deleteAll(List.of("u1"));

        assertThat(cooldowns.findAll()).extracting(Cooldown::pidId).containsExactly("u2");
    }
}
