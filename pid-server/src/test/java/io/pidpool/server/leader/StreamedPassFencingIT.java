package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.testing.LoopbackZooKeeper;
import io.pidpool.server.testing.ZkTestSupport;
import io.pidpool.server.zk.EpochFence;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.WriteResult;
import io.pidpool.server.zk.ZkSupport;
import io.pidpool.server.zk.ZkWrite;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A term's first pass streams its intents into the real {@link FencedWriter} while a successor bumps
 * the epoch half-way through: what reached ZooKeeper is a prefix of the sending order (one session's
 * multi-ops are applied in order, and each checks the epoch), every intent sent after the bump is
 * refused as FENCED, and no add landed without its instance's handshake.
 */
class StreamedPassFencingIT {
    static final ModuleKey M = ModuleKey.parse("a#b#c");
    static final int INSTANCES = 10;
    static final int PIDS = 2_000;
    static final int BUMP_AFTER = 1_000;
    static final Duration GRACE = Duration.ofSeconds(2);

    LoopbackZooKeeper zk;
    CuratorFramework leader;
    CuratorFramework successor;
    final List<PidPoolException> fenced = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        zk = new LoopbackZooKeeper();
        leader = ZkTestSupport.client(zk.connectString(), ViewFixture.LAYOUT.namespace());
        successor = ZkTestSupport.client(zk.connectString(), ViewFixture.LAYOUT.namespace());
    }

    @AfterEach
    void stop() throws Exception {
        successor.close();
        leader.close();
        zk.close();
    }

    @Test
    void anEpochBumpMidStreamLetsAPrefixThroughAndFencesEverythingAfterIt() throws Exception {
        ViewFixture fx = new ViewFixture();
        for (int i = 1; i <= INSTANCES; i++) {
            InstanceKey key = fx.instance(M, "i-" + i, 100 + i, false);
            // the instance nodes as the SDK registered them (version 0, which the handshake expects)
            leader.create()
                    .creatingParentsIfNeeded()
                    .forPath(
                            ViewFixture.LAYOUT.instance(M, key.instance()),
                            InstanceNode.registering(1, "h").encode());
        }
        DbView db = new DbFixture()
                .module(
                        M,
                        INSTANCES,
                        IntStream.range(0, PIDS).mapToObj(i -> "p" + i).toArray(String[]::new))
                .view();
        FenceToken token = EpochFence.bump(leader, ViewFixture.LAYOUT.epoch());
        FencedWriter writer = new FencedWriter(
                () -> ZkSupport.zooKeeper(leader),
                ViewFixture.LAYOUT.namespace(),
                ViewFixture.LAYOUT.epoch(),
                token,
                200,
                8,
                fenced::add);
        List<Intent> sent = new ArrayList<>();
        List<CompletableFuture<List<WriteResult>>> outcomes = new ArrayList<>();
        var reconciler =
                new Reconciler(ViewFixture.LAYOUT, LeaderSettings.defaults().withGrace(GRACE));
        var policy = new PlannerPlacement(PlannerPolicy.defaults(GRACE).withRebalanceDelay(Duration.ZERO));

        var decision = reconciler.decide(
                fx.view,
                db,
                new TermBookkeeping(),
                policy,
                token.epoch(),
                GRACE.toNanos(),
                1_000_000_000L,
                Reconciler.Scope.FULL,
                intent -> {
                    if (sent.size() == BUMP_AFTER) {
                        // the first multi-op left long ago (the writer sends each full one at once):
                        // wait for it, so the prefix that commits is not empty, then a successor wins
                        join(outcomes.get(0));
                        EpochFence.bump(successor, ViewFixture.LAYOUT.epoch());
                    }
                    sent.add(intent);
                    outcomes.add(writer.submit(intent.writes()));
                });
        writer.flush();

        assertThat(decision.intents()).containsExactlyElementsOf(sent);
        assertThat(sent).hasSize(INSTANCES + PIDS);
        int committed = 0;
        boolean refused = false;
        for (int i = 0; i < sent.size(); i++) {
            PidPoolException error = failure(outcomes.get(i));
            if (error == null) {
                assertThat(refused)
                        .as("intent %d committed after an earlier one was refused", i)
                        .isFalse();
                committed++;
            } else {
                assertThat(error.code()).isEqualTo(ErrorCode.FENCED);
                refused = true;
            }
        }
        assertThat(committed).isBetween(1, BUMP_AFTER);
        assertThat(fenced).hasSize(1);
        assertThat(writer.isFenced()).isTrue();

        // ZooKeeper holds exactly the committed prefix, and each add sits under a handshaken pids node
        int nodes = 0;
        for (int i = 1; i <= INSTANCES; i++) {
            String pidsPath = ViewFixture.LAYOUT.pids(M, io.pidpool.core.model.InstanceId.of("i-" + i));
            if (leader.checkExists().forPath(pidsPath) == null) {
                continue;
            }
            for (String child : leader.getChildren().forPath(pidsPath)) {
                PidNode node = PidNode.decode(leader.getData().forPath(pidsPath + "/" + child));
                assertThat(node.state()).isEqualTo(PidState.ADDING);
                assertThat(node.epoch()).isEqualTo(token.epoch());
                nodes++;
            }
        }
        List<ZkWrite> committedCreates = sent.subList(0, committed).stream()
                .filter(intent -> intent.kind() == Intent.Kind.ADD)
                .map(intent -> intent.writes().get(0))
                .toList();
        assertThat(committedCreates).allSatisfy(write -> assertThat(write).isInstanceOf(ZkWrite.Create.class));
        assertThat(nodes).isEqualTo(committedCreates.size());
        for (ZkWrite create : committedCreates) {
            assertThat(leader.checkExists().forPath(create.path())).isNotNull();
        }
        assertThat(((ZkWrite.Create) committedCreates.get(0)).mode()).isEqualTo(CreateMode.PERSISTENT);
    }

    static <T> T join(CompletableFuture<T> future) {
        try {
            return future.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** The failure of a completed outcome, or {@code null} if it committed. */
    static PidPoolException failure(CompletableFuture<?> future) throws Exception {
        try {
            future.get(10, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return (PidPoolException) e.getCause();
        }
    }
}
