package io.pidpool.server.usage;

import io.pidpool.core.advice.UsageAssembly.ModuleFacts;
import io.pidpool.core.advice.UsageAssembly.PidFacts;
import java.util.List;

/**
 * What the database and ZooKeeper say for a usage scan: every module with its live instances and
 * every PID with its module, status, quota and allowance. The server's implementation reads the
 * coordination node's read model (followers too).
 */
public interface UsageFacts {
    List<ModuleFacts> modules();

    List<PidFacts> pids();

    /** Whether this server leads now: only the leader scans on its timer. */
    boolean isLeader();
}
