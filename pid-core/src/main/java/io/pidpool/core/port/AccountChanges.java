package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidRecord;
import java.util.List;
import java.util.Set;

/**
 * What an account snapshot of version {@code since} lacks to be current at {@code version}
 * ({@link PidRepository#changesSince(long)}): read in one transaction.
 *
 * @param version the account version now; equal to {@code since} if nothing changed
 * @param modules every module as it is now (modules are few: sent whole), none if nothing changed
 *     (a module write bumps the version too)
 * @param changed the accounts inserted or updated after {@code since}, as they are now
 * @param removed the ids of accounts deleted after {@code since} that do not exist now
 */
public record AccountChanges(
        long since, long version, List<ModuleConfig> modules, List<PidRecord> changed, Set<String> removed) {
    public AccountChanges {
        modules = List.copyOf(requireNonNull(modules, "modules"));
        changed = List.copyOf(requireNonNull(changed, "changed"));
        removed = Set.copyOf(requireNonNull(removed, "removed"));
    }

    /** Whether the snapshot was already current. */
    public boolean none() {
        return version == since;
    }
}
