package io.pidpool.worker.ring;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.worker.task.NewTask;
import java.io.IOException;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ring membership in ZooKeeper . The worker's node {@code /workers/<group>/<memberId>}
 * is EPHEMERAL and kept by Curator's {@link PersistentNode}, which re-creates it under the same
 * name after a session loss, so a worker comes back to the same ring points. Its data ({@link
 * RingNodeData}) holds the worker's virtual node count ({@code vnodes=...}) and the task types it
 * has handlers for ({@code types=...}): every member computes every other member's points from id
 * and count, so workers configured with different counts still agree on one ring, and builds one
 * ring per task type from the members that advertise it ({@link GroupRing}).
 *
 * <p>A {@link CuratorCache} on the group folder rebuilds the ring after each change. ZooKeeper
 * delivers changes with a delay and a watch can miss intermediate states; a partitioned worker
 * keeps its last ring until it reconnects. Neither is a correctness problem: claims in the task
 * table are conditional, the ring only spreads the polling.
 *
 * <p>Concurrency: the ring is rebuilt and listeners are called on Curator's event thread; {@link
 * #ring()} reads a volatile snapshot.
 */
public final class CuratorRingMembership implements RingMembership {
    private static final Logger LOG = LoggerFactory.getLogger(CuratorRingMembership.class);

    private enum State {
        LATENT,
        STARTED,
        CLOSED
    }

    private final String groupPath;
    private final String memberId;
    private final PersistentNode node;
    private final CuratorCache cache;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private volatile GroupRing view = GroupRing.empty();

    /**
     * @param client a started client, already in the cluster's namespace ({@code pidpool/<cluster>})
     * @param group the worker group (a token)
     * @param memberId this worker's id (a token), see {@link WorkerIdentity}
     * @param virtualNodes this worker's points on the ring
     * @param types the task types this worker has handlers for (at least one), advertised in its node
     */
    public CuratorRingMembership(
            CuratorFramework client,
            String group,
            String memberId,
            int virtualNodes,
            Set<String> types,
            String host,
            Clock clock) {
        requireNonNull(client, "curator");
        Names.requireToken(group, "group");
        Names.requireToken(memberId, "memberId");
        ConsistentHashRing.requireVirtualNodes(virtualNodes);
        requireNonNull(types, "types");
        requireArgument(!types.isEmpty(), "types", "a worker advertises at least one task type");
        types.forEach(NewTask::requireType);
        this.groupPath = "/workers/" + group;
        this.memberId = memberId;
        byte[] data = RingNodeData.encode(virtualNodes, host, clock.instant(), types);
        this.node = new PersistentNode(client, CreateMode.EPHEMERAL, false, groupPath + "/" + memberId, data);
        this.cache = CuratorCache.build(client, groupPath);
        this.cache
                .listenable()
                .addListener(CuratorCacheListener.builder()
                        .forAll((type, before, after) -> rebuild())
                        .forInitialized(this::rebuild)
                        .build());
    }

    @Override
    public String memberId() {
        return memberId;
    }

    @Override
    public GroupRing groupRing() {
        return view;
    }

    @Override
    public void start() {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) {
            throw PidPoolException.illegalState("membership %s was already started", memberId);
        }
        cache.start();
        node.start();
    }

    @Override
    public void addListener(Runnable listener) {
        listeners.add(listener);
    }

    @Override
    public void close() {
        if (!state.compareAndSet(State.STARTED, State.CLOSED)) {
            state.set(State.CLOSED);
            return;
        }
        try {
            node.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("worker {} could not delete its ring node ({}); it goes with the session", memberId, e.toString());
        }
        cache.close();
    }

    private void rebuild() {
        Map<String, GroupRing.Member> members = new HashMap<>();
        cache.stream()
                .filter(d ->
                        d.getPath().startsWith(groupPath + "/") && d.getPath().indexOf('/', groupPath.length() + 1) < 0)
                .forEach(d -> {
                    String id = d.getPath().substring(groupPath.length() + 1);
                    if (id.matches("[A-Za-z0-9_.\\-]{1,64}")) {
                        members.put(id, RingNodeData.decode(d.getData()));
                    }
                });
        GroupRing next;
        try {
            next = GroupRing.of(members);
        } catch (PidPoolException e) {
            LOG.warn("ignoring an unusable view of {}: {}", groupPath, e.getMessage());
            return;
        }
        if (next.equals(view)) {
            return;
        }
        GroupRing before = view;
        view = next;
        ConsistentHashRing all = next.all();
        LOG.info(
                "ring of {} changed: {} -> {} members; worker {} now owns {}% of the slots",
                groupPath,
                before.members().size(),
                next.members().size(),
                memberId,
                String.format("%.1f", all.shareOf(memberId) * 100));
        logTypeChanges(before, next);
        for (Runnable l : listeners) {
            try {
                l.run();
            } catch (RuntimeException e) {
                LOG.warn("ring listener failed", e);
            }
        }
    }

    private void logTypeChanges(GroupRing before, GroupRing next) {
        if (state.get() != State.STARTED || !next.members().containsKey(memberId)) {
            return; // leaving (or not yet in) the group: what it can no longer run is not news
        }
        Set<String> lost = new TreeSet<>(before.types());
        lost.removeIf(next::runs);
        for (String t : lost) {
            LOG.warn(
                    "ring of {}: no live member runs task type '{}' any more; its tasks stay PENDING until one that"
                            + " registers a handler for it joins",
                    groupPath,
                    t);
        }
        next.members().forEach((id, m) -> {
            if (m.types().isEmpty() && !before.members().containsKey(id)) {
                LOG.warn(
                        "ring of {}: member {} advertises no task types (a node without a types line, written by an"
                                + " older pid-worker): it owns no task in this worker's view",
                        groupPath,
                        id);
            }
        });
    }
}
