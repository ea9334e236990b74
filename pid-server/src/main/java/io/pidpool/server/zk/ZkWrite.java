package io.pidpool.server.zk;

import org.apache.zookeeper.CreateMode;

/**
 * One write of a fenced multi-op, with a path relative to the cluster namespace. The
 * {@link FencedWriter} prepends the epoch check and the namespace.
 */
public sealed interface ZkWrite {
    String path();

    /** Creates the node; fails with NODEEXISTS if it is there. */
    record Create(String path, byte[] data, CreateMode mode) implements ZkWrite {
        public Create {
            data = data == null ? new byte[0] : data;
        }
    }

    /** Replaces the data if the node is still at {@code version}. */
    record SetData(String path, byte[] data, int version) implements ZkWrite {
        public SetData {
            data = data == null ? new byte[0] : data;
        }
    }

    /** Deletes the node if it is still at {@code version}. */
    record Delete(String path, int version) implements ZkWrite {}

    /** Fails the multi-op unless the node is at {@code version}. */
    record Check(String path, int version) implements ZkWrite {}

    static Create persistent(String path, byte[] data) {
        return new Create(path, data, CreateMode.PERSISTENT);
    }

    /** Approximate bytes on the wire, to keep one multi-op well under ZooKeeper's jute.maxbuffer. */
    default int size() {
        int data = 0;
        if (this instanceof Create c) {
            data = c.data().length;
        } else if (this instanceof SetData s) {
            data = s.data().length;
        }
        return path().length() + data + 16;
    }
}
