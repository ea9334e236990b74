package io.pidpool.server.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.server.testing.LoopbackZooKeeper;
import io.pidpool.server.testing.ZkTestSupport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The watcher on a real ZooKeeper, with an executor the test pumps by hand, so that "notifications
 * that arrived together" is a fact of the test, not of timing.
 */
class TreeWatcherIT {
    static final String NS = "pidpool/watcher";
    static LoopbackZooKeeper zk;
    static CuratorFramework client;
    static CuratorFramework other;

    final ManualExecutor executor = new ManualExecutor();
    final List<NodeEvent> events = new ArrayList<>();
    final Map<String, Long> known = new ConcurrentHashMap<>();
    String root;
    TreeWatcher watcher;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zk = new LoopbackZooKeeper();
        client = ZkTestSupport.client(zk.connectString(), NS);
        other = ZkTestSupport.client(zk.connectString(), NS);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        other.close();
        client.close();
        zk.close();
    }

    @BeforeEach
    void tree() throws Exception {
        root = "/t" + System.nanoTime();
        client.create().creatingParentContainersIfNeeded().forPath(root + "/a/x", bytes("x0"));
        watcher = new TreeWatcher(client, root, false, executor, events::add, () -> {}, (path, zxid) -> {
            Long mzxid = known.get(path);
            return mzxid != null && mzxid >= zxid;
        });
        watcher.start();
        executor.pumpUntil(() -> upserts(root + "/a/x").size() == 1);
    }

    @AfterEach
    void close() {
        watcher.close();
    }

    @Test
    void theFirstScanDeliversTheExistingSubtree() {
        assertThat(upserts(root)).hasSize(1);
        assertThat(upserts(root + "/a")).hasSize(1);
        assertThat(new String(upserts(root + "/a/x").get(0).data(), StandardCharsets.UTF_8))
                .isEqualTo("x0");
        assertThat(events)
                .anyMatch(e -> e instanceof NodeEvent.Listing l && l.path().equals(root + "/a"));
    }

    @Test
    void nodesCreatedTogetherAreReadTogetherInReadMultiOps() throws Exception {
        List<CuratorOp> creates = new ArrayList<>();
        for (int i = 0; i < 450; i++) {
            creates.add(other.transactionOp().create().forPath(root + "/a/n" + i, bytes("v" + i)));
        }
        long before = watcher.notifications();
        other.transaction().forOperations(creates);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> watcher.notifications() - before >= 450); // all queued before the executor runs

        executor.pumpUntil(
                () -> watcher.reads() == 450 && upserts(root + "/a/n449").size() == 1);

        assertThat(watcher.readRequests()).isEqualTo(3); // 200 + 200 + 50 getData per read multi-op
        for (int i = 0; i < 450; i++) {
            assertThat(upserts(root + "/a/n" + i)).hasSize(1);
        }
    }

    @Test
    void ownWriteIsNotReadButAForeignWriteToTheSamePathIs() throws Exception {
        String x = root + "/a/x";
        long before = watcher.notifications();
        Stat mine = client.setData().forPath(x, bytes("mine"));
        known.put(x, mine.getMzxid()); // what a writer does with its write's result
        await().atMost(Duration.ofSeconds(20)).until(() -> watcher.notifications() - before == 1);
        executor.pumpUntil(() -> watcher.skipped() == 1);
        assertThat(watcher.reads()).isZero();
        assertThat(upserts(x)).hasSize(1); // only the first scan's

        other.setData().forPath(x, bytes("theirs"));
        executor.pumpUntil(() -> upserts(x).size() == 2);
        assertThat(watcher.reads()).isEqualTo(1);
        assertThat(new String(upserts(x).get(1).data(), StandardCharsets.UTF_8)).isEqualTo("theirs");
    }

    @Test
    void aDeletionNeedsNoReadAndBoundsTheRemovedIncarnation() throws Exception {
        String x = root + "/a/x";
        long czxid = upserts(x).get(0).stat().czxid();
        other.delete().forPath(x);
        executor.pumpUntil(() -> events.stream()
                .anyMatch(e -> e instanceof NodeEvent.Removed r && r.path().equals(x)));
        NodeEvent.Removed removed = (NodeEvent.Removed) events.stream()
                .filter(e -> e instanceof NodeEvent.Removed r && r.path().equals(x))
                .findFirst()
                .orElseThrow();
        assertThat(removed.lastStat().czxid()).isGreaterThan(czxid);
        assertThat(watcher.reads()).isZero();
    }

    @Test
    void afterALostSessionTheWatchIsBackAndTheTreeRescanned() throws Exception {
        ZkTestSupport.expireOnServer(client, zk.connectString());
        other.create().forPath(root + "/a/y", bytes("y"));
        executor.pumpUntil(() -> upserts(root + "/a/y").size() == 1);
        other.setData().forPath(root + "/a/y", bytes("y2"));
        executor.pumpUntil(() -> upserts(root + "/a/y").stream()
                .anyMatch(u -> new String(u.data(), StandardCharsets.UTF_8).equals("y2")));
    }

    // ---------------------------------------------------------------- proving the view current

    @Test
    void afterTheFirstScanTheViewIsProvenCurrent() {
        TreeFollower.Proof proof = watcher.proveCurrent(Duration.ofSeconds(10));
        assertThat(proof.current()).as(proof.reason()).isTrue();
        assertThat(proof.zxid())
                .isGreaterThanOrEqualTo(upserts(root + "/a/x").get(0).stat().mzxid());
    }

    /**
     * A node created by another session before the barrier is notified before the barrier's answer;
     * the proof must wait until its read has been handed over. Its read is held back: with a short
     * timeout the proof gives up (and the node is indeed not there yet); released from another thread
     * while the proof waits, the proof returns only after the node was delivered.
     */
    @Test
    void theBarrierWaitsForTheReadsOfEarlierNotifications() throws Exception {
        CompletableFuture<Void> release = new CompletableFuture<>();
        watcher.readHook(read -> read.thenCombine(release, (events, nothing) -> events));
        other.create().forPath(root + "/a/held", bytes("h"));

        TreeFollower.Proof early = watcher.proveCurrent(Duration.ofMillis(300));
        assertThat(early.current()).isFalse();
        assertThat(early.reason()).contains("took longer");
        assertThat(upserts(root + "/a/held")).isEmpty();

        other.create().forPath(root + "/a/held2", bytes("h2"));
        CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS).execute(() -> release.complete(null));
        TreeFollower.Proof proof = watcher.proveCurrent(Duration.ofSeconds(10));
        assertThat(release).isDone();
        assertThat(proof.current()).as(proof.reason()).isTrue();
        assertThat(upserts(root + "/a/held")).hasSize(1);
        assertThat(upserts(root + "/a/held2")).hasSize(1);
    }

    /** Many notifications of one transaction, not pumped: the proof drains, reads and delivers them itself. */
    @Test
    void theProofDeliversEveryNotificationQueuedBeforeTheBarrier() throws Exception {
        List<CuratorOp> creates = new ArrayList<>();
        for (int i = 0; i < 450; i++) {
            creates.add(other.transactionOp().create().forPath(root + "/a/b" + i, bytes("v" + i)));
        }
        other.transaction().forOperations(creates);
        other.delete().forPath(root + "/a/x");

        TreeFollower.Proof proof = watcher.proveCurrent(Duration.ofSeconds(10));

        assertThat(proof.current()).as(proof.reason()).isTrue();
        for (int i = 0; i < 450; i++) {
            assertThat(upserts(root + "/a/b" + i)).as("b" + i).hasSize(1);
        }
        assertThat(events)
                .anyMatch(e -> e instanceof NodeEvent.Removed r && r.path().equals(root + "/a/x"));
    }

    /**
     * A dropped connection (same session): notifications may have been lost, so the view is unproven
     * from then until a scan that started after the watch was back has been delivered; that scan
     * waits for the rescan delay.
     */
    @Test
    void aDisconnectionLeavesTheViewUnprovenUntilTheDeferredRescan() throws Exception {
        // the client may take up to ~2 s to reconnect (a random pause, then a spin delay): a session
        // of 4 s (the most this server allows) survives that
        CuratorFramework patient = CuratorFrameworkFactory.builder()
                .connectString(zk.connectString())
                .namespace(NS)
                .sessionTimeoutMs(4_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        patient.start();
        assertThat(patient.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        try {
            disconnectionLeavesTheViewUnproven(patient);
        } finally {
            watcher.close();
            patient.close();
        }
    }

    private void disconnectionLeavesTheViewUnproven(CuratorFramework patient) throws Exception {
        watcher.close();
        watcher = startWatcher(patient, Duration.ofMillis(1_500));
        long session = patient.getZookeeperClient().getZooKeeper().getSessionId();
        long scans = watcher.scans();

        ZkTestSupport.interruptConnection(patient);
        assertThat(patient.getZookeeperClient().getZooKeeper().getSessionId()).isEqualTo(session);
        TreeFollower.Proof after = watcher.proveCurrent(Duration.ofSeconds(10));
        assertThat(after.current()).isFalse();
        assertThat(after.reason()).contains("interrupted");

        long pumpedUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(700);
        executor.pumpUntil(() -> System.nanoTime() > pumpedUntil);
        assertThat(watcher.scans()).as("the rescan waits").isEqualTo(scans);
        assertThat(watcher.proveCurrent(Duration.ofSeconds(10)).current()).isFalse();

        executor.pumpUntil(() -> watcher.scans() > scans);
        TreeFollower.Proof proof = watcher.proveCurrent(Duration.ofSeconds(10));
        assertThat(proof.current()).as(proof.reason()).isTrue();
    }

    /** An expired session: a new handle, whose watch has seen nothing yet, until its own scan. */
    @Test
    void aNewSessionLeavesTheViewUnprovenUntilItsScan() throws Exception {
        long scans = watcher.scans();
        long session = client.getZookeeperClient().getZooKeeper().getSessionId();
        ZkTestSupport.expireOnServer(client, zk.connectString());
        await().atMost(Duration.ofSeconds(20))
                .until(() -> client.getZookeeperClient().isConnected() && sessionOf(client) != session);

        TreeFollower.Proof after = watcher.proveCurrent(Duration.ofSeconds(10));
        assertThat(after.current()).isFalse();

        executor.pumpUntil(() -> watcher.scans() > scans);
        other.create().forPath(root + "/a/late", bytes("l"));
        TreeFollower.Proof proof = watcher.proveCurrent(Duration.ofSeconds(10));
        assertThat(proof.current()).as(proof.reason()).isTrue();
        assertThat(upserts(root + "/a/late")).hasSize(1);
    }

    /** A read of notified nodes that failed: the node may be missing until the next scan. */
    @Test
    void aFailedReadLeavesTheViewUnprovenUntilTheNextScan() throws Exception {
        watcher.readHook(read -> CompletableFuture.failedFuture(new IllegalStateException("injected")));
        other.setData().forPath(root + "/a/x", bytes("x1"));

        TreeFollower.Proof failed = watcher.proveCurrent(Duration.ofSeconds(10));
        assertThat(failed.current()).isFalse();
        assertThat(failed.reason()).contains("failed");
        assertThat(upserts(root + "/a/x")).hasSize(1); // only the first scan's

        watcher.readHook(UnaryOperator.identity());
        long scans = watcher.scans();
        executor.pumpUntil(() -> watcher.scans() > scans);
        TreeFollower.Proof proof = watcher.proveCurrent(Duration.ofSeconds(10));
        assertThat(proof.current()).as(proof.reason()).isTrue();
        assertThat(upserts(root + "/a/x")).anyMatch(u -> new String(u.data(), StandardCharsets.UTF_8).equals("x1"));
    }

    TreeWatcher startWatcher(CuratorFramework on, Duration rescanDelay) throws InterruptedException {
        long before = events.size();
        TreeWatcher started = new TreeWatcher(on, root, false, executor, events::add, () -> {}, (path, zxid) -> {
                    Long mzxid = known.get(path);
                    return mzxid != null && mzxid >= zxid;
                })
                .deferRescans(rescanDelay);
        started.start();
        executor.pumpUntil(() -> started.scans() > 0 && events.size() > before);
        return started;
    }

    static long sessionOf(CuratorFramework curator) {
        try {
            return curator.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    List<NodeEvent.Upsert> upserts(String path) {
        List<NodeEvent.Upsert> found = new ArrayList<>();
        for (NodeEvent e : events) {
            if (e instanceof NodeEvent.Upsert u && u.path().equals(path)) {
                found.add(u);
            }
        }
        return found;
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Runs tasks only when the test pumps it, on the test thread, one at a time. */
    static final class ManualExecutor implements Executor {
        private final LinkedBlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }

        void pumpUntil(BooleanSupplier condition) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!condition.getAsBoolean()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("condition not reached within 20 s");
                }
                Runnable task = tasks.poll(10, TimeUnit.MILLISECONDS);
                if (task != null) {
                    task.run();
                }
            }
        }
    }
}
