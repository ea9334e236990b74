package io.pidpool.server.usage;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.UsageEventLog;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.port.UsageLedger;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.server.jdbc.Database;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import org.redisson.api.RedissonClient;

/**
 * One test's world: a Redis (shared or the test's own), a random cluster name with 4 shards, a quota
 * ledger writing events, and a throw-away database (H2 in memory; a random PostgreSQL schema when
 * {@code PIDPOOL_TEST_POSTGRES_URL} is set and {@code postgres} is asked for).
 */
final class UsageFixture implements AutoCloseable {
    static final String POSTGRES_ENV = "PIDPOOL_TEST_POSTGRES_URL";
    static final String CONSUMER = "ledger-sync";

    final Clock clock = Clock.systemUTC();
    final QuotaMonth month = new QuotaMonth(YearMonth.now(ZoneOffset.UTC));
    final String redisUrl;
    final RedissonClient redisson;
    final String cluster = RedisSupport.randomCluster();
    final RedissonQuotaLedger quota;
    final QuotaKeys keys;
    final UsageEventLog log;
    final Database database;
    final UsageLedger ledger;
    private final String pgAdmin;
    private final String schema;

    UsageFixture(String redisUrl, boolean postgres) {
        this.redisUrl = redisUrl;
        this.redisson = RedisSupport.client(redisUrl);
        this.quota = RedisSupport.ledger(redisson, cluster, "c1").build();
        this.keys = quota.keys();
        this.log = UsageEventLog.reader(redisson, keys);
        byte[] b = new byte[6];
        ThreadLocalRandom.current().nextBytes(b);
        this.schema = "pp_u_" + HexFormat.of().formatHex(b);
        if (postgres) {
            pgAdmin = System.getenv(POSTGRES_ENV);
            admin("CREATE SCHEMA " + schema);
            database = Database.open(
                    pgAdmin + (pgAdmin.contains("?") ? "&" : "?") + "currentSchema=" + schema, null, null);
        } else {
            pgAdmin = null;
            database = Database.open("jdbc:h2:mem:" + schema + ";DB_CLOSE_DELAY=-1", null, null);
        }
        this.ledger = database.repositories(clock).usage();
    }

    static boolean postgresConfigured() {
        String v = System.getenv(POSTGRES_ENV);
        return v != null && !v.isBlank();
    }

    UsageLedgerSync sync() {
        return new UsageLedgerSync(log, redisson, ledger, CONSUMER, clock, 50, 20_000);
    }

    /** A quota client for another process's view: same cluster, another client id. */
    RedissonQuotaLedger quotaClient(String clientId) {
        return RedisSupport.ledger(redisson, cluster, clientId).build();
    }

    /** Redis's counters of the month, for every PID the database knows, plus {@code pids}. */
    Map<String, Long> redisUsed(Iterable<String> pids) {
        Map<String, Long> used = new TreeMap<>();
        for (String pid : pids) {
            used.put(pid, quota.usage(pid, month).used());
        }
        return used;
    }

    private void admin(String sql) {
        try (Connection c = DriverManager.getConnection(pgAdmin);
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        try {
            RedisSupport.drop(redisson, keys);
        } catch (RuntimeException ignored) {
            // a test's own Redis may be gone already
        }
        quota.close();
        redisson.shutdown();
        database.close();
        if (pgAdmin != null) {
            admin("DROP SCHEMA " + schema + " CASCADE");
        }
    }
}
