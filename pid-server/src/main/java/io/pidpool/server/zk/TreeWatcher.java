package io.pidpool.server.zk;

import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link CuratorCache} over a subtree whose callbacks only hand {@link NodeEvent}s to a consumer
 * (which enqueues them on its owner's executor). It decides nothing.
 *
 * <p>CuratorCache may miss intermediate states and, across a partition, whole events; its users must
 * not rely on seeing every change, only on eventually seeing the latest state, and should re-read
 * on a schedule.
 *
 * <p>Concurrency: callbacks run on the given executor, one at a time and in the cache's order.
 */
public final class TreeWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TreeWatcher.class);

    private final CuratorCache cache;

    /**
     * @param singleNode watch only {@code path} itself, not its descendants
     * @param onInitialized runs once the cache has loaded the subtree
     */
    public TreeWatcher(
            CuratorFramework client,
            String path,
            boolean singleNode,
            Executor executor,
            Consumer<NodeEvent> consumer,
            Runnable onInitialized) {
        this.cache = singleNode
                ? CuratorCache.build(client, path, CuratorCache.Options.SINGLE_NODE_CACHE)
                : CuratorCache.build(client, path);
        CuratorCacheListener listener = CuratorCacheListener.builder()
                .forAll((type, oldData, data) -> {
                    try {
                        switch (type) {
                            case NODE_CREATED, NODE_CHANGED -> {
                                if (data != null && data.getStat() != null) {
                                    consumer.accept(upsert(data));
                                }
                            }
                            case NODE_DELETED -> {
                                if (oldData != null && oldData.getStat() != null) {
                                    consumer.accept(
                                            new NodeEvent.Removed(oldData.getPath(), NodeStat.of(oldData.getStat())));
                                }
                            }
                        }
                    } catch (RuntimeException e) {
                        log.error("watcher consumer failed on {} event", type, e);
                    }
                })
                .forInitialized(onInitialized)
                .build();
        cache.listenable().addListener(listener, executor);
    }

    private static NodeEvent.Upsert upsert(ChildData data) {
        return new NodeEvent.Upsert(data.getPath(), data.getData(), NodeStat.of(data.getStat()));
    }

    public void start() {
        cache.start();
    }

    @Override
    public void close() {
        cache.close();
    }
}
