package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.Permit;
import io.pidpool.client.internal.quota.testing.QuotaScenario;
import io.pidpool.client.internal.quota.testing.QuotaScenario.Client;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.testing.ManualTicker;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.LocalCachedMapOptions.ReconnectionStrategy;

/**
 * The near cache's staleness, on a Redis of the test's own (it disconnects clients and restarts the
 * server). The client trusts its observations for an hour here, so only the coherence design (epoch +
 * invalidation, CLEAR on resubscribe) can make a change visible quickly.
 */
class QuotaNearCacheIT {
    private static final Duration LONG = Duration.ofHours(1);
    private static RedisProcess redis;

    private final QuotaMonth month = new MonthlyWindow(ZoneOffset.UTC).current(Clock.systemUTC());
    private QuotaScenario scenario;

    @BeforeAll
    static void startRedis() {
        redis = RedisProcess.start(true);
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @AfterEach
    void close() {
        if (scenario != null) {
            scenario.close();
        }
    }

    /** A leader (client 0) that provisions "p" with {@code limit}, and a client (1) holding it. */
    private Client setUp(long limit, UnaryOperator<RedissonQuotaLedger.Builder> clientLedger) {
        scenario = new QuotaScenario(redis.url());
        Client leader = scenario.addClient(Set.of());
        leader.ledger().setLimit("p", limit);
        return scenario.addClient(
                Set.of("p"), b -> clientLedger.apply(b.maxObservationAge(LONG).metaTtl(LONG)), b -> b);
    }

    private Client leader() {
        return scenario.client(0);
    }

    private void exhaust(Client client, long limit) {
        for (int i = 0; i < limit; i++) {
            assertThat(client.issuer().tryAcquire(1)).isPresent();
        }
        await("the near cache knows p is used up")
                .atMost(Duration.ofSeconds(5))
                .until(() -> client.ledger().nearCache().clearlyNotEnough("p", month, 1));
    }

    /** Calls of {@code command} the server has run so far (those run by scripts included). */
    private static long commandCalls(String command) {
        String info = RedisProcess.command(redis.port(), "INFO", "commandstats");
        Matcher m = Pattern.compile("cmdstat_" + command + ":calls=(\\d+)").matcher(info == null ? "" : info);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** EVALSHA calls the server has run so far. */
    private static long scriptCalls() {
        return commandCalls("evalsha");
    }

    /** What the reset script does, without the broadcast: a reset whose invalidation got lost. */
    private void resetWithoutBroadcast() {
        QuotaKeys keys = leader().ledger().keys();
        String pids = keys.pids(keys.shardOf("p"));
        String[] value = RedisProcess.command(redis.port(), "HGET", pids, "p").split("\\|");
        RedisProcess.command(redis.port(), "DEL", keys.usage("p", month));
        RedisProcess.command(redis.port(), "HSET", pids, "p", value[0] + "|" + (Long.parseLong(value[1]) + 1));
    }

    @Test
    void nearCachesOnOneRedissonClientShareTheLocalMapAndOutliveEachOther() {
        RedissonClient redisson = io.pidpool.client.internal.quota.testing.RedisSupport.client(redis.url());
        try {
            QuotaKeys keys = new QuotaKeys("shared-" + System.nanoTime(), 4);
            RedisProcess.command(redis.port(), "HSET", keys.pids(keys.shardOf("p")), "p", "7|1");
            QuotaNearCache first = nearCache(redisson, keys);
            QuotaNearCache second = nearCache(redisson, keys);
            await("a miss in the first loads p").atMost(Duration.ofSeconds(5)).until(() -> first.cachedLimit("p")
                    .isPresent());
            // one local copy: the second sees what the first loaded without a load of its own
            assertThat(second.cachedLimit("p")).hasValue(7);

            first.close();
            RedisProcess.command(redis.port(), "HSET", keys.pids(keys.shardOf("p")), "p", "9|2");
            second.publish("p", "9|2");
            await("the second still receives broadcasts after the first closed")
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> second.cachedLimit("p").equals(OptionalLong.of(9)));
            second.close();
        } finally {
            redisson.shutdown();
        }
    }

    private static QuotaNearCache nearCache(RedissonClient redisson, QuotaKeys keys) {
        return new QuotaNearCache(
                redisson,
                keys,
                io.pidpool.core.port.Ticker.system(),
                LONG,
                LONG,
                org.redisson.api.options.LocalCachedMapOptions.ReconnectionStrategy.CLEAR);
    }

    @Test
    void limitsSetInOnePipelinedCallReachTheClientsAndAnOlderLeaderIsRefused() {
        Client client = setUp(3, b -> b);
        exhaust(client, 3);
        Map<String, Long> limits = new java.util.LinkedHashMap<>();
        limits.put("p", 5L);
        for (int i = 0; i < 1_200; i++) { // three pipelined rounds, every shard
            limits.put("q" + i, (long) i);
        }
        long publishes = commandCalls("publish");
        leader().ledger().setLimits(limits, new io.pidpool.core.model.Epoch(7));
        // p had an entry, so its change is broadcast; the 1,200 new PIDs had none, so theirs are not
        assertThat(commandCalls("publish") - publishes).isBetween(1L, 10L);

        await("the raised limit of p reaches the client")
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> client.issuer().tryAcquire(1).isPresent());
        QuotaKeys keys = leader().ledger().keys();
        for (String pid : List.of("q0", "q599", "q1199")) {
            assertThat(RedisProcess.command(redis.port(), "HGET", keys.pids(keys.shardOf(pid)), pid))
                    .startsWith(limits.get(pid) + "|");
        }

        assertThatThrownBy(() -> leader().ledger().setLimits(Map.of("p", 1L), new io.pidpool.core.model.Epoch(6)))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCED));
        assertThat(RedisProcess.command(redis.port(), "HGET", keys.pids(keys.shardOf("p")), "p"))
                .startsWith("5|");
    }

    @Test
    void theClientSaysNotEnoughWithoutARoundTripAndSeesAResetAsSoonAsTheInvalidationArrives() {
        Client client = setUp(3, b -> b);
        exhaust(client, 3);

        long before = scriptCalls();
        for (int i = 0; i < 100; i++) {
            assertThat(client.issuer().tryAcquire(1)).isEmpty();
        }
        assertThat(scriptCalls()).as("no script for a clear no").isEqualTo(before);

        leader().ledger().reset("p", month);

        await("the reset reaches the client")
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> client.issuer().tryAcquire(1).isPresent());
        // and a raised limit the same way
        exhaust(client, 2);
        leader().ledger().setLimit("p", 4);
        await("the new limit reaches the client")
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> client.issuer().tryAcquire(1).isPresent());
        // a miss loads the entry in the background (the permit above may have run before it landed)
        await("the near cache holds the new limit")
                .atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> client.ledger().nearCache().cachedLimit("p").equals(OptionalLong.of(4)));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"client connections killed", "server restarted"})
    void aLostInvalidationIsRepairedWhenTheSubscriptionComesBack(String disconnect) {
        Client client = setUp(3, b -> b);
        exhaust(client, 3);
        resetWithoutBroadcast();
        assertThat(client.issuer().tryAcquire(1))
                .as("stale, as designed, until something tells it")
                .isEmpty();

        if (disconnect.startsWith("client")) {
            assertThat(RedisSupport.killConnections(redis.port(), RedisSupport.clientName(client.redisson())))
                    .isPositive();
        } else {
            redis.restart();
        }

        await("the resubscribed client drops its stale entry")
                .atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions()
                .until(() -> client.issuer().tryAcquire(1).isPresent());
    }

    @Test
    void withoutClearOnReconnectTheLostInvalidationWouldStayLost() {
        Client client = setUp(3, b -> b.reconnectionStrategy(ReconnectionStrategy.NONE));
        exhaust(client, 3);
        resetWithoutBroadcast();

        RedisSupport.killConnections(redis.port(), RedisSupport.clientName(client.redisson()));
        await("the client is reconnected")
                .atMost(Duration.ofSeconds(20))
                .ignoreExceptions()
                .until(() -> client.ledger().usage("other", month) != null);

        await("the client keeps refusing from its stale cache")
                .during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(3))
                .until(() -> client.issuer().tryAcquire(1).isEmpty());
    }

    @Test
    void aRefundByAnotherClientIsSeenOnceTheObservationIsOld() {
        ManualTicker ticker = new ManualTicker();
        Client client = setUp(3, b -> b.ticker(ticker).maxObservationAge(Duration.ofSeconds(1)));
        Permit first = client.issuer().tryAcquire(1).orElseThrow();
        exhaust(client, 2);

        // another client refunds: no epoch bump, no invalidation; the observation bounds the staleness
        leader().issuer().refund(first.deductionId(), "r1", 1);
        assertThat(client.issuer().tryAcquire(1)).isEmpty();

        ticker.advance(Duration.ofMillis(1001));

        assertThat(client.issuer().tryAcquire(1)).isPresent();
    }
}
