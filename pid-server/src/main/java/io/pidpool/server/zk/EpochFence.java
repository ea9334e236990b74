package io.pidpool.server.zk;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.CuratorFramework;
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
        // every stage of the Curator adapter is complete when returned: this does not wait
        CompletableFuture<FenceToken> done =
                bump(new CuratorEpochNode(client), epochPath, floor).toCompletableFuture();
        try {
            return done.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof PidPoolException p) {
                throw p;
            }
            throw PidPoolException.unavailable("bump " + epochPath, e.getCause());
        }
    }

    /**
     * The bump over any {@link EpochNode}: read, then a versioned write of {@code max(current, floor) +
     * 1} (or create with {@code floor + 1} if absent); a race (the version changed, the node appeared)
     * reads again, at most {@value #ATTEMPTS} times in all, then fails with CONFLICT. The term start's
     * one implementation: production runs it over Curator, the protocol simulation over its ZooKeeper.
     */
    public static CompletionStage<FenceToken> bump(EpochNode node, String epochPath, Epoch floor) {
        return attempt(node, epochPath, floor, node.sessionId(), ATTEMPTS);
    }

    private static CompletionStage<FenceToken> attempt(
            EpochNode node, String epochPath, Epoch floor, long session, int attemptsLeft) {
        if (attemptsLeft == 0) {
            return CompletableFuture.failedFuture(new PidPoolException(
                    ErrorCode.CONFLICT, null, epochPath + " kept changing while this node tried to bump it"));
        }
        return node.read(epochPath).thenCompose(current -> {
            if (current == null) {
                byte[] first = Long.toString(floor.value() + 1).getBytes(StandardCharsets.US_ASCII);
                return node.create(epochPath, first).thenCompose(created -> {
                    if (created) {
                        return CompletableFuture.completedFuture(new FenceToken(floor.next(), 0, session));
                    }
                    log.info("{} appeared meanwhile; reading it again", epochPath);
                    return attempt(node, epochPath, floor, session, attemptsLeft - 1);
                });
            }
            long value = parse(current.data(), current.version());
            if (value < floor.value()) {
                log.warn(
                        "{} holds epoch {} but a store has seen epoch {}: continuing above it",
                        epochPath,
                        value,
                        floor.value());
            }
            long next = Math.max(value, floor.value()) + 1;
            byte[] data = Long.toString(next).getBytes(StandardCharsets.US_ASCII);
            return node.write(epochPath, data, current.version()).thenCompose(version -> {
                if (version >= 0) {
                    return CompletableFuture.completedFuture(new FenceToken(new Epoch(next), version, session));
                }
                log.info("{} changed while bumping it; reading it again", epochPath);
                return attempt(node, epochPath, floor, session, attemptsLeft - 1);
            });
        });
    }

    /** The current epoch, or {@link Epoch#NONE} if there is none yet. Blocking. */
    public static Epoch read(CuratorFramework client, String epochPath) {
        try {
            Stat stat = new Stat();
            byte[] data = client.getData().storingStatIn(stat).forPath(epochPath);
            return new Epoch(parse(data, stat.getVersion()));
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
    static long parse(byte[] data, int version) {
        String text = data == null ? "" : new String(data, StandardCharsets.US_ASCII).trim();
        try {
            long value = Long.parseLong(text);
            if (value >= 0) {
                return value;
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        log.error("epoch node holds '{}', not a decimal epoch; using its version {}", text, version);
        return version;
    }
}
