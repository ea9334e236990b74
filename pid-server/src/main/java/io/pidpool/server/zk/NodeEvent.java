package io.pidpool.server.zk;

import java.util.List;

/**
 * One observation of the ZooKeeper tree, from a watcher, a scan or a write's own result. Paths are
 * relative to the cluster namespace. Observations may arrive late and out of order between sources;
 * the consumer orders them by {@link NodeStat#czxid()} / {@link NodeStat#mzxid()}.
 */
public sealed interface NodeEvent {
    String path();

    /** The node exists with this data and stat. */
    record Upsert(String path, byte[] data, NodeStat stat) implements NodeEvent {
        public Upsert {
            data = data == null ? new byte[0] : data;
        }
    }

    /** This incarnation of the node ({@code lastStat.czxid()}) no longer exists. */
    record Removed(String path, NodeStat lastStat) implements NodeEvent {}

    /**
     * A scan read the children of {@code path} together with its stat: every child created at or
     * before {@code stat.pzxid()} and missing from {@code children} was gone at that moment.
     */
    record Listing(String path, List<String> children, NodeStat stat) implements NodeEvent {
        public Listing {
            children = List.copyOf(children);
        }
    }

    /** A scan found {@code path} absent. */
    record Absent(String path) implements NodeEvent {}
}
