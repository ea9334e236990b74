package io.pidpool.server.leader;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.zk.TreeWatcher;
import io.pidpool.server.zk.ZkScanner;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.ACL;

/**
 * What a {@link LeaderTerm} borrows from the {@link ClusterMember} that runs it; {@code viewProof} asks
 * the node's {@code /modules} watcher whether {@code view} is current ({@link TreeWatcher#proveCurrent},
 * on the serial executor).
 */
record NodeContext(
        String nodeId,
        CuratorFramework client,
        ZkLayout layout,
        LeaderSettings settings,
        LeaderDatabase store,
        WarmAccounts warm,
        Repositories repositories,
        QuotaSync quota,
        Duration quotaReconcileInterval,
        Runnable batchHook,
        ZkView view,
        ScheduledExecutorService serial,
        ZkScanner scanner,
        Function<Duration, PlacementPolicy> placement,
        AlertSink alerts,
        Ticker ticker,
        Clock clock,
        List<ACL> acl,
        Function<Duration, TreeFollower.Proof> viewProof) {}
