package io.pidpool.server.leader;

import java.util.Collection;

/**
 * What a RESET_QUOTA operation does besides being recorded. Quota lives in Redis (a later issue); until
 * then the default only logs. Called by the leader inside the batch's database transaction, after the
 * PIDs were checked to exist; it must be idempotent (a batch may be re-applied after a failover before
 * its transaction committed).
 */
@FunctionalInterface
public interface QuotaResetHook {
    void resetQuota(Collection<String> pidIds);

    static QuotaResetHook logging() {
        org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(QuotaResetHook.class);
        return pids -> log.info("quota reset of {} PIDs recorded (the quota ledger is not wired yet)", pids.size());
    }
}
