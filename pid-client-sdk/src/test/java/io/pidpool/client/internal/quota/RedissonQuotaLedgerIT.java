package io.pidpool.client.internal.quota;

import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.contract.QuotaLedgerContract;
import io.pidpool.core.port.QuotaLedger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** The {@link QuotaLedgerContract} against real Redis (the shared server; see {@link RedisSupport}). */
class RedissonQuotaLedgerIT extends QuotaLedgerContract {
    private static RedissonClient redisson;
    private String cluster;

    @BeforeAll
    static void connect() {
        redisson = RedisSupport.client(RedisSupport.sharedUrl());
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    @Override
    protected QuotaLedger createLedger() {
        cluster = RedisSupport.randomCluster();
        return RedisSupport.ledger(redisson, cluster, "contract").build();
    }

    @Override
    protected void closeLedger(QuotaLedger ledger) {
        RedissonQuotaLedger redis = (RedissonQuotaLedger) ledger;
        redis.close();
        RedisSupport.drop(redisson, redis.keys());
    }
}
