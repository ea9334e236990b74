package io.pidpool.core.protocol;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;

/**
 * The ZooKeeper layout of docs/design.md §4. Paths are relative to the Curator namespace {@link
 * #namespace()} ({@code pidpool/<cluster>}), so every client builds its Curator framework with that
 * namespace and uses these paths as they are.
 */
public record ZkLayout(String cluster) {
    public static final String DEFAULT_CLUSTER = "default";

    public ZkLayout {
        Names.requireToken(cluster, "cluster");
    }

    /** Curator namespace (no leading slash): {@code pidpool/<cluster>}. */
    public String namespace() {
        return "pidpool/" + cluster;
    }

    public String leader() {
        return "/leader";
    }

    public String epoch() {
        return "/epoch";
    }

    public String notifyNode() {
        return "/notify";
    }

    public String modules() {
        return "/modules";
    }

    public String module(ModuleKey module) {
        return modules() + "/" + module;
    }

    /** The instance's EPHEMERAL registration node, created by the SDK. */
    public String instance(ModuleKey module, InstanceId instance) {
        return module(module) + "/" + instance.value();
    }

    /** The PERSISTENT node, created by the leader, under which the instance's PID nodes live. */
    public String pids(ModuleKey module, InstanceId instance) {
        return module(module) + "/" + instance.pidsNodeName();
    }

    public String pid(ModuleKey module, InstanceId instance, String pidId) {
        return pid(pids(module, instance), pidId);
    }

    /** {@link #pid(ModuleKey, InstanceId, String)} under a pids node path already built. */
    public static String pid(String pidsPath, String pidId) {
        return pidsPath + "/" + Names.requirePidId(pidId, "pid");
    }

    public String workers(String group) {
        return "/workers/" + Names.requireToken(group, "group");
    }

    public String worker(String group, String hash) {
        return workers(group) + "/" + Names.requireToken(hash, "worker");
    }

    public String workerIds() {
        return "/worker-ids";
    }

    public String workerId(int slot) {
        return workerIds() + "/" + slot;
    }

    /**
     * PERSISTENT marks, one per worker-id slot, that outlive the slot's EPHEMERAL node: the timestamp
     * up to which the slot's holders may have issued Snowflake ids, so that the next holder starts
     * after it (an ephemeral node's data dies with the node, so it cannot carry that).
     */
    public String workerIdMarks() {
        return "/worker-id-marks";
    }

    public String workerIdMark(int slot) {
        return workerIdMarks() + "/" + slot;
    }

    /** Whether a child name under a module node is a leader-owned pids node rather than an instance. */
    public static boolean isPidsNodeName(String childName) {
        return childName.endsWith(InstanceId.PIDS_SUFFIX);
    }

    /** The instance a pids node belongs to. */
    public static InstanceId instanceOfPidsNode(String childName) {
        return InstanceId.of(childName.substring(0, childName.length() - InstanceId.PIDS_SUFFIX.length()));
    }
}
