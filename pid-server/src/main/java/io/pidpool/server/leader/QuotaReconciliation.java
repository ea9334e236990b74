package io.pidpool.server.leader;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.port.QuotaResetLog;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The full comparison of a {@link QuotaProvisioner} with what the database holds: the limits of every
 * PID (read in bulk, only the differences written; a PID the database no longer has gets 0) and the
 * recorded resets the provisioner has not applied. What it writes is guarded on the provisioner's
 * side (the term's epoch, each reset's generation), so a comparison that raced a newer write changes
 * nothing it should not. Runs on {@link QuotaSync}'s thread.
 */
final class QuotaReconciliation {
    // QuotaSync's category: the reconciliation's lines belong to its work
    private static final Logger log = LoggerFactory.getLogger(QuotaSync.class);

    private final QuotaProvisioner provisioner;
    private final QuotaResetLog resetLog;

    QuotaReconciliation(QuotaProvisioner provisioner, QuotaResetLog resetLog) {
        this.provisioner = provisioner;
        this.resetLog = resetLog;
    }

    /** Writes only the limits that differ from {@code full}; returns how many it corrected. */
    int limits(Map<String, Long> full, Epoch term) {
        Map<String, Long> actual = provisioner.limits();
        Map<String, Long> fixes = new LinkedHashMap<>();
        full.forEach((pid, limit) -> {
            if (!limit.equals(actual.get(pid))) {
                fixes.put(pid, limit);
            }
        });
        actual.forEach((pid, limit) -> {
            if (!full.containsKey(pid) && limit != 0) {
                fixes.put(pid, 0L);
            }
        });
        if (!fixes.isEmpty()) {
            provisioner.setLimits(fixes, term);
            log.info("quota reconciliation corrected {} of {} limits", fixes.size(), full.size());
        }
        return fixes.size();
    }

    /**
     * Re-applies every recorded reset whose generation the provisioner has not applied (Redis was down
     * when it was committed and the committing leader died before Redis came back). Each is guarded by
     * its generation in the store, so one applied meanwhile (or twice) is not applied again. Returns
     * how many it re-applied.
     */
    int resets() {
        List<QuotaResetLog.Reset> recorded = resetLog.latest();
        if (recorded.isEmpty()) {
            return 0;
        }
        Map<String, Long> applied = provisioner.resetGenerations();
        int repaired = 0;
        for (QuotaResetLog.Reset r : recorded) {
            if (applied.getOrDefault(r.pidId(), 0L) < r.generation()
                    && provisioner.resetOnce(r.pidId(), r.generation(), r.at())) {
                repaired++;
                log.warn(
                        "quota reconciliation re-applied the lost RESET_QUOTA of PID {} (generation {}, committed {})",
                        r.pidId(),
                        r.generation(),
                        r.at());
            }
        }
        return repaired;
    }
}
