package io.pidpool.server.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.server.testing.LoopbackZooKeeper;
import io.pidpool.server.testing.ZkTestSupport;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class FencedWriterIT {
    static final String NS = "pidpool/writer";
    static LoopbackZooKeeper zk;
    static CuratorFramework client;
    final List<PidPoolException> fenced = new CopyOnWriteArrayList<>();
    String root;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zk = new LoopbackZooKeeper();
        client = ZkTestSupport.client(zk.connectString(), NS);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        client.close();
        zk.close();
    }

    @BeforeEach
    void freshTree() throws Exception {
        root = "/t" + System.nanoTime();
        client.create().creatingParentContainersIfNeeded().forPath(root);
        client.delete().quietly().forPath("/epoch");
    }

    FencedWriter writer(FenceToken token, int maxOps) {
        return new FencedWriter(() -> ZkSupport.zooKeeper(client), NS, "/epoch", token, maxOps, 4, fenced::add);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static <T> T join(CompletableFuture<T> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    static PidPoolException failure(CompletableFuture<?> future) {
        try {
            future.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return (PidPoolException) e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("expected a failure");
    }

    @Test
    void aThousandUnitsTravelInAFewPipelinedMultiOps() throws Exception {
        FenceToken token = EpochFence.bump(client, "/epoch");
        FencedWriter writer = writer(token, 200);
        List<CompletableFuture<List<WriteResult>>> futures = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            futures.add(writer.submit(List.of(ZkWrite.persistent(root + "/n" + i, bytes("v" + i)))));
        }
        writer.flush();
        for (var future : futures) {
            WriteResult result = join(future).get(0);
            assertThat(result.stat()).isNotNull(); // create2: the new node's stat comes back
            assertThat(result.stat().version()).isZero();
        }
        assertThat(client.getChildren().forPath(root)).hasSize(1000);
        // 199 writes + the epoch check per multi-op: ceil(1000 / 199) = 6
        assertThat(writer.multisSent()).isEqualTo(6);
        assertThat(writer.opsSent()).isEqualTo(1006);
        assertThat(fenced).isEmpty();
    }

    /**
     * Units reach ZooKeeper in the order they were submitted, also while the submitting thread and
     * ZooKeeper's event thread (sending the next multi-op when one completes) flush at the same time,
     * as a streamed pass does: the creates' zxids follow the submission order.
     */
    @Test
    void unitsAreAppliedInSubmissionOrderWhileCompletionsFlushConcurrently() throws Exception {
        FenceToken token = EpochFence.bump(client, "/epoch");
        FencedWriter writer =
                new FencedWriter(() -> ZkSupport.zooKeeper(client), NS, "/epoch", token, 200, 8, fenced::add);
        int units = 40_000;
        List<CompletableFuture<List<WriteResult>>> futures = new ArrayList<>();
        for (int i = 0; i < units; i++) {
            futures.add(writer.submit(List.of(ZkWrite.persistent(root + "/n" + i, bytes("v")))));
            if (i % 64 == 0) {
                Thread.onSpinWait(); // let completions arrive while submitting goes on
            }
        }
        writer.flush();
        long previous = -1;
        for (int i = 0; i < units; i++) {
            long czxid = join(futures.get(i)).get(0).stat().czxid();
            // one multi-op is one transaction: its units share a zxid
            assertThat(czxid).as("unit %d applied before unit %d", i, i - 1).isGreaterThanOrEqualTo(previous);
            previous = czxid;
        }
        assertThat(fenced).isEmpty();
    }

    @Test
    void aNewerEpochFencesTheOldWriterOffAndNothingIsWritten() throws Exception {
        FenceToken old = EpochFence.bump(client, "/epoch");
        FencedWriter writer = writer(old, 200);
        var before = writer.submit(List.of(ZkWrite.persistent(root + "/before", bytes("x"))));
        writer.flush();
        join(before);

        FenceToken successor = EpochFence.bump(client, "/epoch"); // another leader was elected
        assertThat(successor.epoch()).isEqualTo(old.epoch().next());

        var attempt = writer.submit(List.of(ZkWrite.persistent(root + "/after", bytes("x"))));
        writer.flush();
        assertThat(failure(attempt).code()).isEqualTo(ErrorCode.FENCED);
        assertThat(client.checkExists().forPath(root + "/after")).isNull();
        assertThat(fenced).hasSize(1);
        assertThat(writer.isFenced()).isTrue();
        // once fenced, always fenced: refused without a round trip, the listener is not called again
        var later = writer.submit(List.of(ZkWrite.persistent(root + "/later", bytes("x"))));
        assertThat(failure(later).code()).isEqualTo(ErrorCode.FENCED);
        assertThat(fenced).hasSize(1);
    }

    @Test
    void aDeletedEpochNodeFencesToo() throws Exception {
        FencedWriter writer = writer(EpochFence.bump(client, "/epoch"), 200);
        client.delete().forPath("/epoch");
        var attempt = writer.submit(List.of(ZkWrite.persistent(root + "/x", bytes("x"))));
        writer.flush();
        assertThat(failure(attempt).code()).isEqualTo(ErrorCode.FENCED);
        assertThat(client.checkExists().forPath(root + "/x")).isNull();
    }

    @Test
    void aWriterOfAnotherSessionRefusesToWrite() throws Exception {
        FenceToken real = EpochFence.bump(client, "/epoch");
        FencedWriter writer = writer(new FenceToken(real.epoch(), real.epochVersion(), real.sessionId() + 1), 200);
        var attempt = writer.submit(List.of(ZkWrite.persistent(root + "/x", bytes("x"))));
        writer.flush();
        assertThat(failure(attempt).code()).isEqualTo(ErrorCode.FENCED);
        assertThat(client.checkExists().forPath(root + "/x")).isNull();
    }

    @Test
    void oneFailingWriteFailsOnlyItsOwnUnit() throws Exception {
        FencedWriter writer = writer(EpochFence.bump(client, "/epoch"), 200);
        client.create().forPath(root + "/taken", bytes("someone else's"));
        var a = writer.submit(List.of(ZkWrite.persistent(root + "/a", bytes("a"))));
        var taken = writer.submit(List.of(ZkWrite.persistent(root + "/taken", bytes("mine"))));
        var stale = writer.submit(List.of(new ZkWrite.SetData(root + "/taken", bytes("mine"), 7)));
        var c = writer.submit(List.of(
                ZkWrite.persistent(root + "/c", bytes("c")),
                new ZkWrite.Create(root + "/c/d", bytes("d"), CreateMode.PERSISTENT)));
        writer.flush();
        assertThat(join(a)).hasSize(1);
        assertThat(join(c)).hasSize(2);
        assertThat(failure(taken).code()).isEqualTo(ErrorCode.CONFLICT);
        assertThat(failure(stale).code()).isEqualTo(ErrorCode.CONFLICT);
        assertThat(new String(client.getData().forPath(root + "/taken"), StandardCharsets.UTF_8))
                .isEqualTo("someone else's");
        assertThat(client.checkExists().forPath(root + "/c/d")).isNotNull();
        assertThat(fenced).isEmpty();
        assertThat(writer.isFenced()).isFalse();
    }

    @Test
    void staleUnitsSpreadOverOneMultiOpAreIsolatedByBisectionNotOneFullResendEach() throws Exception {
        FencedWriter writer = writer(EpochFence.bump(client, "/epoch"), 200);
        for (int i = 0; i < 199; i++) {
            client.create().forPath(root + "/n" + i, bytes("v"));
        }
        List<CompletableFuture<List<WriteResult>>> futures = new ArrayList<>();
        List<Integer> stale = List.of(3, 40, 41, 97, 150, 198);
        for (int i = 0; i < 199; i++) {
            int version = stale.contains(i) ? 5 : 0; // an SDK acknowledged those meanwhile
            futures.add(writer.submit(List.of(new ZkWrite.SetData(root + "/n" + i, bytes("leader"), version))));
        }
        writer.flush();
        for (int i = 0; i < 199; i++) {
            if (stale.contains(i)) {
                assertThat(failure(futures.get(i)).code()).isEqualTo(ErrorCode.CONFLICT);
                assertThat(client.getData().forPath(root + "/n" + i)).isEqualTo(bytes("v"));
            } else {
                assertThat(join(futures.get(i))).hasSize(1);
                assertThat(client.getData().forPath(root + "/n" + i)).isEqualTo(bytes("leader"));
            }
        }
        assertThat(writer.partialFailures()).isEqualTo(stale.size());
        // resending all the others after each failure costs 200 + 199 + ... + 194 = 1,379 operations; the
        // bisection resends each unit only about log2(199) = 8 times at worst, and much less in practice
        assertThat(writer.opsSent()).isLessThan(800);
        assertThat(writer.multisSent()).isLessThan(6 * 8 + 2);
        assertThat(fenced).isEmpty();
    }

    @Test
    void aPausedWriterRefusesAndAClosedOneIsFenced() throws Exception {
        FencedWriter writer = writer(EpochFence.bump(client, "/epoch"), 200);
        var queued = writer.submit(List.of(ZkWrite.persistent(root + "/q", bytes("q"))));
        writer.pause();
        assertThat(failure(queued).code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(failure(writer.submit(List.of(ZkWrite.persistent(root + "/p", bytes("p")))))
                        .code())
                .isEqualTo(ErrorCode.UNAVAILABLE);
        writer.resume();
        var ok = writer.submit(List.of(ZkWrite.persistent(root + "/r", bytes("r"))));
        writer.flush();
        assertThat(join(ok)).hasSize(1);
        writer.close();
        assertThat(failure(writer.submit(List.of(ZkWrite.persistent(root + "/s", bytes("s")))))
                        .code())
                .isEqualTo(ErrorCode.FENCED);
        assertThat(client.checkExists().forPath(root + "/q")).isNull();
    }

    @Test
    void bumpingCreatesTheEpochAndCountsUp() {
        assertThat(EpochFence.read(client, "/epoch").value()).isZero();
        FenceToken first = EpochFence.bump(client, "/epoch");
        FenceToken second = EpochFence.bump(client, "/epoch");
        assertThat(first.epoch().value()).isEqualTo(1);
        assertThat(second.epoch().value()).isEqualTo(2);
        assertThat(second.epochVersion()).isEqualTo(first.epochVersion() + 1);
        assertThat(EpochFence.read(client, "/epoch").value()).isEqualTo(2);
        assertThatThrownBy(() -> writer(first, 1)).isInstanceOf(PidPoolException.class);
    }

    @Test
    void garbageInTheEpochNodeDoesNotStopTheCluster() throws Exception {
        EpochFence.bump(client, "/epoch"); // created: epoch 1, version 0
        FenceToken second = EpochFence.bump(client, "/epoch"); // epoch 2, version 1
        client.setData().forPath("/epoch", bytes("not a number")); // version 2
        FenceToken next = EpochFence.bump(client, "/epoch");
        // the version stands in for the unreadable number: still a newer epoch than any before
        assertThat(next.epoch().value())
                .isEqualTo(3)
                .isGreaterThan(second.epoch().value());
    }
}
