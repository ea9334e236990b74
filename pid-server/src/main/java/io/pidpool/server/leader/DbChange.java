package io.pidpool.server.leader;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidAccount;

/** A change of the database view, replayed by {@link DbView} after the database committed it. */
public sealed interface DbChange {
    record PidPut(PidAccount pid) implements DbChange {}

    record PidRemoved(String pidId) implements DbChange {}

    record ModulePut(ModuleConfig config) implements DbChange {}
}
