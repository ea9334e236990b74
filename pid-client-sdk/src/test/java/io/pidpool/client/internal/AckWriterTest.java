package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.apache.zookeeper.KeeperException.Code;
import org.junit.jupiter.api.Test;

/** The acknowledgement writer over a recording {@link PidNodes}: batching, splitting, re-reading. */
class AckWriterTest {
    private static final long S = 0x5eed;
    private static final String ROOT = "/modules/fin#risk#scorer/box-5eed-pids";

    /** Records each request; answers are given by the test. */
    private final class Recorder implements PidNodes {
        final List<String> sent = new ArrayList<>();
        Answer<List<Reply>> lastMulti;
        Answer<Reply> lastSingle;

        @Override
        public void setData(String path, byte[] data, int version, Answer<Reply> answer) {
            sent.add("set " + path);
            lastSingle = answer;
        }

        @Override
        public void setDataTogether(List<Write> writes, Answer<List<Reply>> answer) {
            sent.add("multi " + writes.stream().map(Write::path).toList());
            lastMulti = answer;
        }

        @Override
        public void getData(String path, Answer<Reply> answer) {
            sent.add("get " + path);
        }

        @Override
        public void readTogether(List<String> paths, Answer<List<Reply>> answer) {}

        @Override
        public void getChildren(String path, Answer<List<String>> answer) {}

        @Override
        public void watch(String root, TreeFollower.Watch watch, Answer<Void> watched) {}

        @Override
        public void unwatch(String root, TreeFollower.Watch watch) {}
    }

    private final Deque<Runnable> stateThread = new ArrayDeque<>();
    private final List<String> settled = new ArrayList<>();
    private final Recorder nodes = new Recorder();
    private final PidTracker tracker = new PidTracker();
    private final AckWriter writer = new AckWriter(
            nodes,
            tracker,
            new ClientLoop() {
                @Override
                public void post(String what, Runnable task) {
                    stateThread.add(task);
                }

                @Override
                public void apply(List<Action> actions) {}

                @Override
                public void onReply(long sessionId, long sentAt) {}

                @Override
                public void readSent(int count) {}

                @Override
                public void readAnswered() {}

                @Override
                public void writeSettled(long generation, String pid) {
                    settled.add(pid);
                }
            },
            () -> 0L,
            () -> new AckWriter.Target(1, S));

    private void runStateThread() {
        while (!stateThread.isEmpty()) {
            stateThread.poll().run();
        }
    }

    private static Action.Write write(String pid) {
        AccountPayload account =
                new AccountPayload(100, 0, new SealedSecret("k1", "pw".getBytes(StandardCharsets.UTF_8)), Map.of());
        PidNode node = PidNode.instruction(pid, PidState.ADDING, new Epoch(1), S, account);
        return new Action.Write(pid, 1, ROOT + "/" + pid, node, 3, 7);
    }

    @Test
    void writesDueTogetherTravelInOneMultiOpAndARefusalSplitsIt() {
        writer.queue(write("a"));
        writer.queue(write("b"));
        writer.queue(write("c"));
        assertThat(nodes.sent).isEmpty(); // sent once the tasks queued before have run
        runStateThread();
        assertThat(nodes.sent).containsExactly("multi [" + ROOT + "/a, " + ROOT + "/b, " + ROOT + "/c]");

        // b changed meanwhile: nothing was written; b is read again, a and c are sent again together
        nodes.lastMulti.done(
                Code.BADVERSION,
                List.of(
                        PidNodes.Reply.failed(Code.OK),
                        PidNodes.Reply.failed(Code.BADVERSION),
                        PidNodes.Reply.failed(Code.RUNTIMEINCONSISTENCY)));
        runStateThread();
        assertThat(nodes.sent)
                .containsExactly(
                        "multi [" + ROOT + "/a, " + ROOT + "/b, " + ROOT + "/c]",
                        "get " + ROOT + "/b",
                        "multi [" + ROOT + "/a, " + ROOT + "/c]");
        assertThat(settled).containsExactly("b");
    }

    @Test
    void aWriteDecidedUnderAnEarlierRegistrationIsNotSent() {
        Action.Write old = write("a");
        writer.queue(new Action.Write("a", 0, old.path(), old.node(), 3, 7));
        writer.queue(write("b"));
        runStateThread();
        assertThat(nodes.sent).containsExactly("set " + ROOT + "/b");
    }
}
