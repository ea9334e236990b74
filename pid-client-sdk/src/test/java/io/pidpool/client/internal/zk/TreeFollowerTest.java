package io.pidpool.client.internal.zk;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.internal.zk.TreeFollower.Change;
import io.pidpool.client.internal.zk.TreeFollower.Mode;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The recipe over a recording port and an executor the test runs by hand (the real ZooKeeper binding
 * is tested by the server's {@code TreeWatcherIT}, the SDK's by {@code PidClientWatchIT}): what it
 * sends, what it skips, and the order it promises its listener.
 */
class TreeFollowerTest {
    final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    final List<String> seen = new ArrayList<>();
    final Map<String, Long> known = new HashMap<>();
    final Set<String> writing = new HashSet<>();
    final Port port = new Port();
    TreeFollower<String> follower;

    /** Records every request; nodes read are "path" strings. */
    final class Port implements TreeFollower.Port<String> {
        final List<String> requests = new ArrayList<>();
        final List<CompletableFuture<List<String>>> reads = new ArrayList<>();
        CompletableFuture<TreeFollower.Scan<String>> scan;
        TreeFollower.Watch watch;
        TreeFollower.Answer added;
        int settled;

        @Override
        public Object handle() {
            return this;
        }

        @Override
        public void addWatch(
                Object handle, String path, boolean recursive, TreeFollower.Watch w, TreeFollower.Answer a) {
            requests.add("watch " + path);
            watch = w;
            added = a;
        }

        @Override
        public void removeWatch(Object handle, String path, TreeFollower.Watch w) {
            requests.add("unwatch " + path);
        }

        @Override
        public CompletableFuture<TreeFollower.Scan<String>> scan(Object handle, String path, boolean recursive) {
            requests.add("scan " + path);
            return scan = new CompletableFuture<>();
        }

        @Override
        public CompletableFuture<List<String>> read(List<String> paths) {
            requests.add("read " + paths);
            var read = new CompletableFuture<List<String>>();
            reads.add(read);
            return read;
        }

        @Override
        public void sync(Object handle, String path, TreeFollower.Answer synced) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void settled() {
            settled++;
        }

        /** Answers the read with the node of every path it asked for. */
        void answer(int read) {
            String request = requests.stream()
                    .filter(r -> r.startsWith("read "))
                    .skip(read)
                    .findFirst()
                    .orElseThrow();
            List<String> paths =
                    List.of(request.substring(6, request.length() - 1).split(", "));
            reads.get(read).complete(paths);
        }
    }

    @BeforeEach
    void follow() {
        follower = new TreeFollower<>(
                port,
                "/r",
                true,
                Mode.LEAN,
                path -> path.startsWith("/r/"),
                tasks::add,
                new TreeFollower.Listener<>() {
                    @Override
                    public void node(String node) {
                        seen.add("node " + node);
                    }

                    @Override
                    public void deleted(String path, long zxid) {
                        seen.add("deleted " + path + "@" + zxid);
                    }
                },
                new TreeFollower.Known() {
                    @Override
                    public boolean covers(String path, long zxid) {
                        return known.getOrDefault(path, 0L) >= zxid;
                    }

                    @Override
                    public boolean writing(String path) {
                        return writing.contains(path);
                    }
                });
    }

    void run() {
        for (Runnable task; (task = tasks.poll()) != null; ) {
            task.run();
        }
    }

    /** Started, watch answered, the scan listed nothing. */
    void started() {
        follower.start();
        port.added.done(Code.OK);
        port.scan.complete(new TreeFollower.Scan<>(List.of(), List.of()));
        run();
        port.requests.clear();
    }

    @Test
    void leanSendsTheScanRightBehindTheWatchAndReadsWhatItListedInMultiOpsOf200() {
        follower.start();
        assertThat(port.requests).containsExactly("watch /r", "scan /r"); // before the watch's reply

        List<String> children = new ArrayList<>();
        for (int i = 0; i < 450; i++) {
            children.add("/r/c" + i);
        }
        port.scan.complete(new TreeFollower.Scan<>(List.of("/r"), children));
        run();
        assertThat(seen).containsExactly("node /r");
        assertThat(port.requests).hasSize(5).last().asString().startsWith("read [/r/c400");
        assertThat(port.settled).isEqualTo(1); // the listing, after its reads were sent

        port.answer(0);
        port.answer(1);
        port.answer(2);
        run();
        assertThat(seen).hasSize(451);
        assertThat(seen.get(1)).isEqualTo("node /r/c0");
        assertThat(seen.get(450)).isEqualTo("node /r/c449");
        assertThat(port.settled).isEqualTo(4);
        assertThat(follower.readRequests()).isZero(); // a scan's reads are not notified reads
    }

    @Test
    void aNotificationCoveredByTheReplyQueuedRightBehindItIsNotRead() {
        started();
        port.watch.changed(Change.CHANGED, "/r/a", 7); // the event thread: our own write's notification
        tasks.add(() -> known.put("/r/a", 7L)); // ... and its reply, right behind it
        port.watch.changed(Change.CREATED, "/r/b", 8); // someone else's
        run();

        assertThat(port.requests).containsExactly("read [/r/b]");
        assertThat(follower.skipped()).isEqualTo(1);
        port.answer(0);
        run();
        assertThat(seen).containsExactly("node /r/b");
    }

    @Test
    void aNotificationAboutANodeBeingWrittenWaitsForTheWriteToSettle() {
        started();
        writing.add("/r/a");
        port.watch.changed(Change.CHANGED, "/r/a", 7);
        run();
        assertThat(port.requests).isEmpty();

        writing.remove("/r/a"); // the write failed: the notification was someone else's
        follower.writeSettled("/r/a");
        run();
        assertThat(port.requests).containsExactly("read [/r/a]");

        follower.writeSettled("/r/a"); // nothing waits any more
        run();
        assertThat(port.requests).hasSize(1);
    }

    @Test
    void aDeletionIsHandedOverInItsOwnTaskWithoutAReadAndCancelsTheReadOfItsNode() {
        started();
        port.watch.changed(Change.CREATED, "/r/a", 7);
        port.watch.changed(Change.DELETED, "/r/a", 9);
        tasks.add(() -> seen.add("owner task"));
        port.watch.changed(Change.DELETED, "/r/b", 10);
        port.watch.changed(Change.CHANGED, "/r", 11); // not followed
        run();

        assertThat(seen).containsExactly("deleted /r/a@9", "owner task", "deleted /r/b@10");
        assertThat(port.requests).isEmpty();
        assertThat(follower.notifications()).isEqualTo(3);
    }

    @Test
    void leanRescansOnReconnectionAndAddsTheWatchAgainOnlyIfItWasNeverAnswered() {
        follower.start();
        port.added.done(Code.CONNECTIONLOSS);
        port.scan.completeExceptionally(KeeperException.create(Code.CONNECTIONLOSS));
        run();
        port.requests.clear();

        follower.reconnected();
        assertThat(port.requests).containsExactly("watch /r", "scan /r");
        port.added.done(Code.OK);
        port.scan.complete(new TreeFollower.Scan<>(List.of(), List.of()));
        run();
        port.requests.clear();

        follower.reconnected();
        assertThat(port.requests).containsExactly("scan /r");
    }

    @Test
    void afterCloseNothingIsHandedOverButReadsInFlightStillSettle() {
        started();
        port.watch.changed(Change.CREATED, "/r/a", 7);
        run();
        int settled = port.settled;

        follower.close();
        port.watch.changed(Change.DELETED, "/r/b", 8);
        port.answer(0);
        run();

        assertThat(seen).isEmpty();
        assertThat(port.settled).isEqualTo(settled + 1);
        assertThat(port.requests).containsExactly("read [/r/a]", "unwatch /r");
    }

    @Test
    void leanProvesNothing() {
        started();
        assertThat(follower.proveCurrent(Duration.ofSeconds(1)).current()).isFalse();
    }
}
