package io.pidpool.server.leader;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;

/** One instance of one module. */
public record InstanceKey(ModuleKey module, InstanceId instance) implements Comparable<InstanceKey> {
    @Override
    public int compareTo(InstanceKey other) {
        int byModule = module.compareTo(other.module);
        return byModule != 0 ? byModule : instance.compareTo(other.instance);
    }

    @Override
    public String toString() {
        return module + "/" + instance;
    }
}
