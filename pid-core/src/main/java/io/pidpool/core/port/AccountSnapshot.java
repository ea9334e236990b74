package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidRecord;
import java.util.List;

/**
 * Every module and every account, read in one transaction, with the account version they were read
 * at ({@link PidRepository#loadAccounts()}).
 *
 * @param version the {@linkplain PidRepository#changesSince account version} of the read, or
 *     {@link #UNVERSIONED} if the store keeps none (then nothing can be proved about it later)
 * @param pids in no particular order
 */
public record AccountSnapshot(long version, List<ModuleConfig> modules, List<PidRecord> pids) {
    /** The version of a snapshot from a store that keeps no account version. */
    public static final long UNVERSIONED = -1;

    public AccountSnapshot {
        modules = List.copyOf(requireNonNull(modules, "modules"));
        pids = List.copyOf(requireNonNull(pids, "pids"));
    }

    public boolean versioned() {
        return version != UNVERSIONED;
    }
}
