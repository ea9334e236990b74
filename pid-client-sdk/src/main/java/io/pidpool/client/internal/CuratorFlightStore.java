package io.pidpool.client.internal;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.singleflight.FlightClaim;
import io.pidpool.core.singleflight.FlightKeys;
import io.pidpool.core.singleflight.FlightLease;
import io.pidpool.core.singleflight.FlightLocks;
import io.pidpool.core.singleflight.FlightRecord;
import io.pidpool.core.singleflight.FlightResults;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single-flight ports on ZooKeeper, under {@code /pidpool/<cluster>/single-flight/<key>} (a
 * CONTAINER node, which the server removes once it is empty):
 *
 * <ul>
 *   <li>{@code lock}: EPHEMERAL, created by the holder's session; the round is its creation zxid.
 *       Waiters watch it ({@code exists} watch) and compete again when it is gone.
 *   <li>{@code result}: PERSISTENT, a {@link FlightRecord}. The holder claims it right after winning
 *       the lock (writes PENDING with a versioned {@code setData}), and publishes its outcome with a
 *       {@code multi} of {@code check(lock)} and {@code setData(result, claimedVersion)} <em>before</em>
 *       it deletes its lock.
 * </ul>
 *
 * <p><b>Fencing.</b> Every write that depends on "I hold the lock" goes through the ZooKeeper handle
 * of the session that created the lock, never through Curator's retrying API: a retry may land on a
 * newer session, while a handle whose session expired never sends anything again, so its lock cannot
 * have been deleted under a write that still succeeds. A holder whose lock was deleted while its
 * session lives (by hand) is fenced by the result node's version: the next holder's claim moved it.
 *
 * <p><b>Cleanup.</b> {@link #purgeExpired} deletes expired result nodes of keys nobody holds
 * (versioned, so it never removes a record written meanwhile).
 *
 * <p>Concurrency: thread-safe and stateless apart from the Curator client; calls block for one or a
 * few round trips. Watch callbacks run on ZooKeeper's event thread and only complete futures.
 */
public final class CuratorFlightStore implements FlightLocks, FlightResults {
    private static final Logger log = LoggerFactory.getLogger(CuratorFlightStore.class);
    private static final int ATTEMPTS = 5;

    private final CuratorFramework namespaced;
    private final CuratorFramework curator;
    private final String prefix;
    private final List<ACL> acl;
    private final ScheduledExecutorService timer;
    private final byte[] owner;

    /**
     * @param curator a started client; its session is this participant's
     * @param namespace {@code pidpool/<cluster>}
     * @param acl the ACL of new nodes
     * @param timer bounds {@link #released} waits
     * @param owner written into lock nodes, for operators
     */
    public CuratorFlightStore(
            CuratorFramework curator, String namespace, List<ACL> acl, ScheduledExecutorService timer, String owner) {
        this.curator = curator;
        this.namespaced = curator.usingNamespace(namespace);
        this.prefix = "/" + namespace;
        this.acl = acl;
        this.timer = timer;
        this.owner = owner.getBytes(StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- FlightLocks

    @Override
    public FlightLease.Acquisition tryAcquire(String key) {
        String lock = prefix + FlightKeys.lockPath(key);
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            ensureKeyNode(key);
            ZooKeeper zk = handle("taking the lock of " + key);
            try {
                Stat stat = new Stat();
                zk.create(lock, owner, acl, CreateMode.EPHEMERAL, stat);
                return new FlightLease.Acquired(new FlightLease(key, stat.getCzxid(), zk.getSessionId()));
            } catch (KeeperException.NodeExistsException e) {
                try {
                    Stat held = zk.exists(lock, false);
                    if (held != null) {
                        return new FlightLease.Held(held.getCzxid());
                    }
                } catch (KeeperException | InterruptedException again) {
                    throw failure("reading the lock of " + key, again);
                }
                // released meanwhile: try again
            } catch (KeeperException.NoNodeException e) {
                // the empty key node was reaped meanwhile: create it again
            } catch (KeeperException | InterruptedException e) {
                throw failure("taking the lock of " + key, e);
            }
        }
        throw PidPoolException.unavailable("single-flight '" + key + "': the lock kept changing hands", null);
    }

    @Override
    public CompletableFuture<Void> released(String key, long round, Duration atMost) {
        CompletableFuture<Void> gone = new CompletableFuture<>();
        try {
            ZooKeeper zk = handle("watching the lock of " + key);
            // any event counts: a deletion, or a connection change after which the caller looks again
            Stat stat = zk.exists(prefix + FlightKeys.lockPath(key), event -> gone.complete(null));
            if (stat == null || stat.getCzxid() != round) {
                gone.complete(null);
            }
        } catch (RuntimeException | KeeperException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.debug("single-flight '{}': cannot watch the lock: {}", key, e.toString());
            gone.complete(null);
        }
        if (!gone.isDone()) {
            var timeout = timer.schedule(() -> gone.complete(null), atMost.toNanos(), TimeUnit.NANOSECONDS);
            gone.whenComplete((v, e) -> timeout.cancel(false));
        }
        return gone;
    }

    @Override
    public void release(FlightLease lease) {
        String lock = prefix + FlightKeys.lockPath(lease.key());
        ZooKeeper zk = handle("releasing the lock of " + lease.key());
        if (zk.getSessionId() != lease.sessionId()) {
            return; // that session is gone, and its lock with it
        }
        try {
            Stat stat = zk.exists(lock, false);
            if (stat != null && stat.getCzxid() == lease.round() && stat.getEphemeralOwner() == lease.sessionId()) {
                zk.delete(lock, stat.getVersion());
            }
        } catch (KeeperException.NoNodeException | KeeperException.SessionExpiredException e) {
            // gone already
        } catch (KeeperException | InterruptedException e) {
            throw failure("releasing the lock of " + lease.key(), e);
        }
    }

    // ---------------------------------------------------------------- FlightResults

    @Override
    public Optional<FlightRecord> read(String key) {
        try {
            return Optional.of(FlightRecord.decode(namespaced.getData().forPath(FlightKeys.resultPath(key))));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (PidPoolException malformed) {
            log.warn("single-flight '{}': unreadable result node ignored: {}", key, malformed.getMessage());
            return Optional.empty();
        } catch (Exception e) {
            throw failure("reading the result of " + key, e);
        }
    }

    @Override
    public Optional<FlightClaim> claim(FlightLease lease, FlightRecord pending) {
        String result = prefix + FlightKeys.resultPath(lease.key());
        String lock = prefix + FlightKeys.lockPath(lease.key());
        ZooKeeper zk = handle("claiming " + lease.key());
        if (zk.getSessionId() != lease.sessionId()) {
            return Optional.empty();
        }
        byte[] data = pending.encode();
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            try {
                Stat stat = zk.exists(result, false);
                if (stat == null) {
                    zk.multi(List.of(Op.check(lock, -1), Op.create(result, data, acl, CreateMode.PERSISTENT)));
                    return Optional.of(new FlightClaim(lease, 0));
                }
                List<OpResult> done =
                        zk.multi(List.of(Op.check(lock, -1), Op.setData(result, data, stat.getVersion())));
                int version = ((OpResult.SetDataResult) done.get(1)).getStat().getVersion();
                return Optional.of(new FlightClaim(lease, version));
            } catch (KeeperException.ConnectionLossException | KeeperException.OperationTimeoutException e) {
                throw failure("claiming " + lease.key(), e);
            } catch (KeeperException e) {
                // the result node changed under us (swept, or a late write), or our lock is gone
                if (!stillHolds(zk, lock, lease)) {
                    return Optional.empty();
                }
            } catch (InterruptedException e) {
                throw failure("claiming " + lease.key(), e);
            }
        }
        return Optional.empty();
    }

    @Override
    public boolean publish(FlightClaim claim, FlightRecord record) {
        FlightLease lease = claim.lease();
        ZooKeeper zk = handle("publishing " + lease.key());
        if (zk.getSessionId() != lease.sessionId()) {
            return false; // Curator replaced the session: the lock died with the old one
        }
        try {
            zk.multi(List.of(
                    Op.check(prefix + FlightKeys.lockPath(lease.key()), -1),
                    Op.setData(prefix + FlightKeys.resultPath(lease.key()), record.encode(), claim.version())));
            return true;
        } catch (KeeperException.ConnectionLossException | KeeperException.OperationTimeoutException e) {
            throw failure("publishing " + lease.key(), e);
        } catch (KeeperException e) {
            log.info("single-flight '{}': publish of round {} refused: {}", lease.key(), lease.round(), e.code());
            return false;
        } catch (InterruptedException e) {
            throw failure("publishing " + lease.key(), e);
        }
    }

    /**
     * Deletes the result nodes that expired before {@code nowMillis} (or cannot be read) of keys
     * that nobody holds; returns how many.
     */
    public int purgeExpired(long nowMillis) {
        List<String> keys;
        try {
            keys = namespaced.getChildren().forPath(FlightKeys.root());
        } catch (KeeperException.NoNodeException e) {
            return 0;
        } catch (Exception e) {
            throw failure("listing " + prefix + FlightKeys.root(), e);
        }
        int purged = 0;
        for (String key : keys) {
            try {
                if (namespaced.checkExists().forPath(FlightKeys.lockPath(key)) != null) {
                    continue;
                }
                Stat stat = new Stat();
                byte[] data = namespaced.getData().storingStatIn(stat).forPath(FlightKeys.resultPath(key));
                boolean expired;
                try {
                    expired = FlightRecord.decode(data).expiredAt(nowMillis);
                } catch (PidPoolException malformed) {
                    expired = true;
                }
                if (expired) {
                    namespaced.delete().withVersion(stat.getVersion()).forPath(FlightKeys.resultPath(key));
                    purged++;
                }
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                // gone or rewritten meanwhile
            } catch (PidPoolException bad) {
                log.warn("single-flight: node '{}' under {} is no valid key", key, FlightKeys.root());
            } catch (Exception e) {
                throw failure("purging the result of " + key, e);
            }
        }
        return purged;
    }

    private boolean stillHolds(ZooKeeper zk, String lock, FlightLease lease) {
        try {
            Stat stat = zk.exists(lock, false);
            return stat != null && stat.getCzxid() == lease.round() && stat.getEphemeralOwner() == lease.sessionId();
        } catch (KeeperException | InterruptedException e) {
            throw failure("reading the lock of " + lease.key(), e);
        }
    }

    private void ensureKeyNode(String key) {
        try {
            namespaced
                    .create()
                    .creatingParentContainersIfNeeded()
                    .withMode(CreateMode.CONTAINER)
                    .withACL(acl)
                    .forPath(FlightKeys.keyPath(key));
        } catch (KeeperException.NodeExistsException e) {
            // the usual case
        } catch (Exception e) {
            throw failure("creating the node of " + key, e);
        }
    }

    private ZooKeeper handle(String what) {
        try {
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            if (zk == null || !zk.getState().isConnected()) {
                throw PidPoolException.unavailable("no ZooKeeper connection for " + what, null);
            }
            return zk;
        } catch (PidPoolException e) {
            throw e;
        } catch (Exception e) {
            throw failure(what, e);
        }
    }

    private static PidPoolException failure(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        return PidPoolException.unavailable("single-flight: " + what + " failed: " + e, e);
    }
}
