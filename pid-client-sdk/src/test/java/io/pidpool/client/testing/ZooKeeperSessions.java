package io.pidpool.client.testing;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooKeeper;

/**
 * Ends a ZooKeeper session <em>on the server</em>, as the server does when a client stops sending
 * heartbeats: a second handle joins the session (same id and password) and closes it. The server
 * deletes the session's ephemeral nodes before it answers the close, so they are gone when {@link
 * #expire} returns; the victim's own client learns it on its next contact (Disconnected, then
 * Expired: Curator's SUSPENDED, then LOST). Unlike {@code injectSessionExpiration()}, which only
 * makes the client give up, nothing of the session survives on the server.
 */
public final class ZooKeeperSessions {
    private static final long CONNECT_SECONDS = 10;
    private static final int ATTEMPTS = 5;

    private ZooKeeperSessions() {}

    /** Expires the session of {@code victim} on the server behind {@code connectString}. */
    public static void expire(String connectString, ZooKeeper victim) {
        expire(connectString, victim.getSessionId(), victim.getSessionPasswd());
    }

    /**
     * Expires session {@code sessionId}; returns once the server has confirmed it gone (a handle that
     * tries to join it is told Expired).
     */
    public static void expire(String connectString, long sessionId, byte[] password) {
        try {
            for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                BlockingQueue<KeeperState> states = new ArrayBlockingQueue<>(16);
                ZooKeeper joiner = new ZooKeeper(
                        connectString, 10_000, event -> states.offer(event.getState()), sessionId, password);
                try {
                    KeeperState state = states.poll(CONNECT_SECONDS, TimeUnit.SECONDS);
                    if (state == KeeperState.Expired) {
                        return; // gone
                    }
                    if (state != KeeperState.SyncConnected) {
                        throw new IllegalStateException(
                                "could not join session 0x" + Long.toHexString(sessionId) + " to expire it: " + state);
                    }
                } finally {
                    joiner.close(); // closes the session itself: the server drops its ephemeral nodes now
                }
                // loop: the next join must be told Expired (the victim may have moved the session back)
            }
            throw new IllegalStateException(
                    "session 0x" + Long.toHexString(sessionId) + " still alive after " + ATTEMPTS + " attempts");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
