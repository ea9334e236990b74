package io.pidpool.server.usage;

import io.pidpool.core.advice.UsageAssembly.ModuleFacts;
import io.pidpool.core.advice.UsageAssembly.PidFacts;
import io.pidpool.core.model.ModuleKey;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What the database and ZooKeeper say for a usage scan: every module with its live instances and
 * every PID with its module, status, quota and allowance. The server's implementation reads the
 * coordination node's read model (followers too).
 */
public interface UsageFacts {
    List<ModuleFacts> modules();

    List<PidFacts> pids();

    /**
     * The modules a PID entered or left at or after {@code since} (the month's start): their usage is
     * estimated from their current PIDs; every other module's is the exact sum of its PIDs' counters.
     * Empty when unknown (then every module is estimated). Default: unknown.
     */
    default Optional<Set<ModuleKey>> modulesChangedSince(Instant since) {
        return Optional.empty();
    }

    /** Whether this server leads now: only the leader scans on its timer. */
    boolean isLeader();
}
