package io.pidpool.server.zk;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads and bumps {@code /epoch}, the fencing token of leadership. The node is PERSISTENT; its data is
 * the epoch as decimal text; its version is what every fenced write checks.
 */
public final class EpochFence {
    private static final Logger log = LoggerFactory.getLogger(EpochFence.class);
    private static final int ATTEMPTS = 5;

    private EpochFence() {}

    /**
     * Raises the epoch by one (creating {@code /epoch} with 1 if absent) with a versioned write, and
     * returns the token of the new term bound to the client's current session. Call only while
     * holding leadership. Blocking.
     */
    public static FenceToken bump(CuratorFramework client, String epochPath) {
        return bump(client, epochPath, Epoch.NONE);
    }

    /**
     * {@link #bump} to above {@code floor} as well: the new epoch is {@code max(current, floor) + 1}.
     * The floor is the highest epoch another store has seen (the database's leader epoch): after
     * ZooKeeper lost {@code /epoch} (a new ensemble, a wiped data directory) the new epoch must still
     * be above every epoch written to that store, or that store would fence every new leader.
     */
    public static FenceToken bump(CuratorFramework client, String epochPath, Epoch floor) {
        long session = ZkSupport.sessionId(client);
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            try {
                Stat stat = new Stat();
                byte[] data = client.getData().storingStatIn(stat).forPath(epochPath);
                long current = parse(data, stat);
                if (current < floor.value()) {
                    log.warn(
                            "{} holds epoch {} but a store has seen epoch {}: continuing above it",
                            epochPath,
                            current,
                            floor.value());
                }
                long next = Math.max(current, floor.value()) + 1;
                Stat after = client.setData()
                        .withVersion(stat.getVersion())
                        .forPath(epochPath, Long.toString(next).getBytes(StandardCharsets.US_ASCII));
                return new FenceToken(new Epoch(next), after.getVersion(), session);
            } catch (KeeperException.NoNodeException e) {
                try {
                    client.create()
                            .creatingParentContainersIfNeeded()
                            .withMode(CreateMode.PERSISTENT)
                            .forPath(epochPath, Long.toString(floor.value() + 1).getBytes(StandardCharsets.US_ASCII));
                    return new FenceToken(floor.next(), 0, session);
                } catch (KeeperException.NodeExistsException raced) {
                    log.info("{} appeared meanwhile; reading it again", epochPath);
                } catch (KeeperException k) {
                    throw ZkErrors.translate(k, "create " + epochPath);
                } catch (Exception other) {
                    throw PidPoolException.unavailable("create " + epochPath, other);
                }
            } catch (KeeperException.BadVersionException e) {
                log.info("{} changed while bumping it; reading it again", epochPath);
            } catch (KeeperException e) {
                throw ZkErrors.translate(e, "bump " + epochPath);
            } catch (Exception e) {
                throw PidPoolException.unavailable("bump " + epochPath, e);
            }
        }
        throw new PidPoolException(
                ErrorCode.CONFLICT, null, epochPath + " kept changing while this node tried to bump it");
    }

    /** The current epoch, or {@link Epoch#NONE} if there is none yet. Blocking. */
    public static Epoch read(CuratorFramework client, String epochPath) {
        try {
            Stat stat = new Stat();
            byte[] data = client.getData().storingStatIn(stat).forPath(epochPath);
            return new Epoch(parse(data, stat));
        } catch (KeeperException.NoNodeException e) {
            return Epoch.NONE;
        } catch (KeeperException e) {
            throw ZkErrors.translate(e, "read " + epochPath);
        } catch (Exception e) {
            throw PidPoolException.unavailable("read " + epochPath, e);
        }
    }

    /**
     * The epoch in the node's data. Garbage written by someone else must not stop the cluster: the
     * version counts every bump since the node was created, so it is a lower bound that still grows.
     */
    static long parse(byte[] data, Stat stat) {
        String text = data == null ? "" : new String(data, StandardCharsets.US_ASCII).trim();
        try {
            long value = Long.parseLong(text);
            if (value >= 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        log.error("epoch node holds '{}', not a decimal epoch; using its version {}", text, stat.getVersion());
        return stat.getVersion();
    }
}
