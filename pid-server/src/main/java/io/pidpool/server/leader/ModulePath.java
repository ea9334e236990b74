package io.pidpool.server.leader;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.protocol.ZkLayout;
import java.util.HashMap;
import java.util.Map;

/**
 * What a path under {@code /modules} names: the root, a module, an instance's registration node, its
 * pids node or one of its PID nodes. Anything else, including a name PidPool would never write, is
 * {@link Kind#OTHER}.
 */
record ModulePath(Kind kind, ModuleKey module, InstanceId instance, String pid) {
    enum Kind {
        ROOT,
        MODULE,
        INSTANCE,
        PIDS,
        PID,
        OTHER
    }

    private static final ModulePath ROOT = new ModulePath(Kind.ROOT, null, null, null);
    private static final ModulePath OTHER = new ModulePath(Kind.OTHER, null, null, null);

    /** The instance of an INSTANCE, PIDS or PID path: the registration node or the PIDs' holder. */
    InstanceKey instanceKey() {
        return new InstanceKey(module, instance);
    }

    /**
     * Parses the paths of one layout. Module keys are cached (up to 100,000 names), since a scan
     * parses the same module name for every node below it. Not thread-safe.
     */
    static final class Parser {
        private static final int MAX_CACHED_MODULES = 100_000;

        private final ZkLayout layout;
        private final Map<String, ModuleKey> moduleKeys = new HashMap<>();

        Parser(ZkLayout layout) {
            this.layout = layout;
        }

        ModulePath parse(String path) {
            String root = layout.modules();
            if (path.equals(root)) {
                return ROOT;
            }
            if (!path.startsWith(root + "/")) {
                return OTHER;
            }
            String[] parts = path.substring(root.length() + 1).split("/", -1);
            try {
                ModuleKey module = moduleKeys.get(parts[0]);
                if (module == null) {
                    module = ModuleKey.parse(parts[0]);
                    if (moduleKeys.size() < MAX_CACHED_MODULES) {
                        moduleKeys.put(parts[0], module);
                    }
                }
                if (parts.length == 1) {
                    return new ModulePath(Kind.MODULE, module, null, null);
                }
                String child = parts[1];
                boolean pids = ZkLayout.isPidsNodeName(child);
                InstanceId instance = pids ? ZkLayout.instanceOfPidsNode(child) : InstanceId.of(child);
                if (parts.length == 2) {
                    return new ModulePath(pids ? Kind.PIDS : Kind.INSTANCE, module, instance, null);
                }
                if (parts.length == 3 && pids) {
                    return new ModulePath(Kind.PID, module, instance, Names.requirePidId(parts[2], "pid"));
                }
            } catch (PidPoolException e) {
                // a name that PidPool would never write
            }
            return OTHER;
        }
    }
}
