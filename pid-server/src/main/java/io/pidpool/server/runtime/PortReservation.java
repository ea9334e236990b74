package io.pidpool.server.runtime;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * The HTTP port, bound as the very first step of start-up and handed over to the HTTP API just
 * before it starts. A server whose port is taken (a second server on one machine, a typo in
 * {@code http.port}) must fail before it joins the leader election: otherwise it may lead, move
 * accounts and write the epoch for the few seconds start-up takes, only to stop again. A port of 0
 * is resolved here, so the API listens on the port this reservation picked.
 *
 * <p>The listening socket accepts no connection (backlog 1, never accepted); it is closed right
 * before Jetty binds the same address, which leaves a window of microseconds, not of the seconds
 * that connecting ZooKeeper, the database and Redis take.
 */
final class PortReservation implements AutoCloseable {
    private final ServerSocket socket;

    private PortReservation(ServerSocket socket) {
        this.socket = socket;
    }

    /** Binds {@code host:port} or throws {@code UNAVAILABLE} on {@code http.port}. */
    static PortReservation bind(String host, int port) {
        ServerSocket socket = null;
        try {
            socket = new ServerSocket();
            socket.setReuseAddress(true); // as Jetty does: a port in TIME_WAIT is not "taken"
            socket.bind(new InetSocketAddress(host, port), 1);
            return new PortReservation(socket);
        } catch (IOException | RuntimeException e) {
            if (socket != null) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // nothing was bound
                }
            }
            throw new PidPoolException(
                    ErrorCode.UNAVAILABLE,
                    "http.port",
                    "cannot listen on " + host + ":" + port + " (http.host, http.port): " + e.getMessage(),
                    e);
        }
    }

    /** The bound port (the picked one when asked for 0). */
    int port() {
        return socket.getLocalPort();
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing a listening socket does not fail in a way that matters here
        }
    }
}
