package io.pidpool.server.leader;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the operator API shows about the cluster: built from the database and this node's ZooKeeper
 * view (every node watches {@code /modules}, so followers answer too; their view may lag the
 * leader's by the watcher's delay). Values only; no secrets.
 */
public final class ReadModel {
    private ReadModel() {}

    /**
     * @param leaderId the node id of the current leader, empty if there is none
     * @param epoch the current epoch in {@code /epoch}
     * @param members every node taking part in the election
     */
    public record Cluster(
            String nodeId,
            boolean isLeader,
            String leaderId,
            Epoch epoch,
            List<String> members,
            boolean zookeeperConnected) {}

    /**
     * @param live whether its ephemeral node exists
     * @param held PIDs it acknowledged (ADDED, UPDATING, UPDATED)
     * @param pending PIDs in ADDING or DELETING
     */
    public record Instance(
            InstanceId id, long sessionId, String host, int weight, boolean live, int held, int pending) {}

    /**
     * @param pids accounts of the module in the database
     * @param assignable the ACTIVE ones
     * @param held of those, held by a live instance of the module
     */
    public record Module(
            ModuleKey key, ModuleConfig config, int pids, int assignable, int held, List<Instance> instances) {}

    /**
     * @param instance where its node is, or null if it has none
     * @param nodeState the node's state, or null
     * @param error the SDK's error report in the node, empty if none
     */
    public record Pid(
            String id,
            ModuleKey module,
            PidAvailability status,
            long monthlyQuota,
            long overageAllowance,
            InstanceId instance,
            PidState nodeState,
            String error) {}

    static List<Module> modules(LeaderDatabase.Snapshot db, ZkView view) {
        Map<ModuleKey, ModuleConfig> configs = new TreeMap<>();
        db.modules().forEach(m -> configs.put(m.key(), m));
        Map<ModuleKey, List<PidRecord>> byModule = new HashMap<>();
        for (PidRecord pid : db.pids()) {
            byModule.computeIfAbsent(pid.module(), k -> new ArrayList<>()).add(pid);
        }
        Set<ModuleKey> keys = new TreeSet<>(configs.keySet());
        keys.addAll(byModule.keySet());
        keys.addAll(view.modules());
        List<Module> modules = new ArrayList<>();
        for (ModuleKey key : keys) {
            List<PidRecord> pids = byModule.getOrDefault(key, List.of());
            List<Instance> instances = instances(key, view);
            Set<String> heldHere = new java.util.HashSet<>();
            for (Instance instance : instances) {
                if (instance.live()) {
                    view.pidNodes(new InstanceKey(key, instance.id())).forEach((pid, entry) -> {
                        if (holds(entry.node())) {
                            heldHere.add(pid);
                        }
                    });
                }
            }
            int assignable = 0;
            int held = 0;
            for (PidRecord pid : pids) {
                if (pid.status().assignable()) {
                    assignable++;
                }
                if (heldHere.contains(pid.id())) {
                    held++;
                }
            }
            modules.add(new Module(
                    key, configs.getOrDefault(key, ModuleConfig.of(key, 1)), pids.size(), assignable, held, instances));
        }
        return modules;
    }

    private static List<Instance> instances(ModuleKey key, ZkView view) {
        Map<InstanceId, Instance> result = new TreeMap<>();
        Set<InstanceId> ids = new TreeSet<>(view.instances(key).keySet());
        ids.addAll(view.pidsNodes(key).keySet());
        for (InstanceId id : ids) {
            ZkView.InstanceEntry entry = view.instances(key).get(id);
            boolean live = entry != null && entry.entry().stat().isEphemeral();
            int held = 0;
            int pending = 0;
            for (ZkView.PidEntry pid : view.pidNodes(new InstanceKey(key, id)).values()) {
                if (holds(pid.node())) {
                    held++;
                } else if (pid.node() != null && pid.node().state().isInstruction()) {
                    pending++;
                }
            }
            result.put(
                    id,
                    new Instance(
                            id,
                            live ? entry.sessionId() : 0,
                            entry != null && entry.node() != null ? entry.node().host() : "",
                            entry != null && entry.node() != null ? entry.node().weight() : 1,
                            live,
                            held,
                            pending));
        }
        return List.copyOf(result.values());
    }

    static boolean holds(PidNode node) {
        return node != null
                && (node.state() == PidState.ADDED
                        || node.state() == PidState.UPDATED
                        || node.state() == PidState.UPDATING);
    }

    /** Accounts with where their node is, filtered by module and node state (null = any). */
    static List<Pid> pids(Collection<PidRecord> accounts, ZkView view, ModuleKey module, PidState state) {
        List<Pid> result = new ArrayList<>();
        for (PidRecord account : accounts) {
            if (module != null && !account.module().equals(module)) {
                continue;
            }
            ZkView.PidEntry where = null;
            for (ZkView.PidEntry entry : view.nodesOf(account.id())) {
                if (where == null
                        || entry.entry().stat().czxid() > where.entry().stat().czxid()) {
                    where = entry;
                }
            }
            PidState nodeState =
                    where == null || where.node() == null ? null : where.node().state();
            if (state != null && state != nodeState) {
                continue;
            }
            result.add(new Pid(
                    account.id(),
                    account.module(),
                    account.status(),
                    account.monthlyQuota(),
                    account.overageAllowance(),
                    where == null ? null : where.holder().instance(),
                    nodeState,
                    where == null
                            ? ""
                            : where.node() == null
                                    ? where.problem()
                                    : where.node().error()));
        }
        result.sort(java.util.Comparator.comparing(Pid::id));
        return result;
    }
}
