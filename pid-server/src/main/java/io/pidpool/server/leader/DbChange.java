package io.pidpool.server.leader;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidRecord;

/** A change of the database view, replayed by {@link DbView} after the database committed it. */
public sealed interface DbChange {
    record PidPut(PidRecord pid) implements DbChange {}

    record PidRemoved(String pidId) implements DbChange {}

    record ModulePut(ModuleConfig config) implements DbChange {}
}
