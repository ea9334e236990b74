package io.pidpool.server.leader;

import io.pidpool.core.model.Epoch;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link QuotaProvisioner#logging()}: provisions nothing and says so. Thread-safe (stateless). */
final class LoggingQuotaProvisioner implements QuotaProvisioner {
    private static final Logger log = LoggerFactory.getLogger(QuotaProvisioner.class);

    @Override
    public void setLimits(Map<String, Long> hardLimits, Epoch leaderEpoch) {
        log.debug("{} quota limits not provisioned (no quota ledger wired)", hardLimits.size());
    }

    @Override
    public void reset(Collection<String> pidIds, Instant at) {
        log.info("quota reset of {} PIDs recorded (no quota ledger wired)", pidIds.size());
    }

    @Override
    public Map<String, Long> limits() {
        return Map.of();
    }

    @Override
    public String toString() {
        return "QuotaProvisioner.logging()";
    }
}
