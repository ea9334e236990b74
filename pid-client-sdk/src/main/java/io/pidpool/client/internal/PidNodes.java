package io.pidpool.client.internal;

import io.pidpool.client.internal.zk.TreeFollower;
import java.util.List;
import org.apache.zookeeper.KeeperException.Code;

/**
 * Port: the coordination calls the pids watch ({@link PidsWatch}) and the acknowledgement writer
 * ({@link AckWriter}) make on one client's ZooKeeper session. Paths are inside the client's namespace
 * ({@code /modules/...}). Production: {@link CuratorPidNodes}; the protocol simulation answers them on
 * virtual time.
 *
 * <p>Each call is asynchronous: the answer arrives on the coordination's event thread (never the
 * caller's), in the order the session's requests were sent. A call that throws was not sent.
 */
interface PidNodes {
    /** One node's answer: its data and version, or why not. */
    record Reply(Code code, byte[] data, int version, long mzxid) {
        static Reply failed(Code code) {
            return new Reply(code, null, -1, 0);
        }
    }

    /** A versioned write of one node, inside a multi-op. */
    record Write(String path, byte[] data, int version) {}

    /** An answer on the coordination's event thread. */
    interface Answer<T> {
        void done(Code code, T value);
    }

    /** Versioned setData of one node. */
    void setData(String path, byte[] data, int version, Answer<Reply> answer) throws Exception;

    /**
     * Versioned setData of several nodes in one multi-op (all or nothing). On a refusal the answer's
     * list names the first failing write with its code; the others answer OK or RUNTIMEINCONSISTENCY.
     */
    void setDataTogether(List<Write> writes, Answer<List<Reply>> answer) throws Exception;

    void getData(String path, Answer<Reply> answer) throws Exception;

    /** getData of several nodes in one read multi-op; each answers on its own. */
    void readTogether(List<String> paths, Answer<List<Reply>> answer) throws Exception;

    void getChildren(String path, Answer<List<String>> answer) throws Exception;

    /**
     * Adds a persistent recursive watch on {@code root}; its notifications (and its connection's state
     * events other than SyncConnected) reach {@code watch} on the coordination's event thread.
     */
    void watch(String root, TreeFollower.Watch watch, Answer<Void> watched) throws Exception;

    /** Removes the watch (best effort). */
    void unwatch(String root, TreeFollower.Watch watch) throws Exception;
}
