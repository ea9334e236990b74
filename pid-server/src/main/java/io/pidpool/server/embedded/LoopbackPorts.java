package io.pidpool.server.embedded;

import io.pidpool.core.error.PidPoolException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/** Port checks on 127.0.0.1, so a taken port fails start-up with a message naming the option. */
public final class LoopbackPorts {
    public static final String LOOPBACK = "127.0.0.1";

    private LoopbackPorts() {}

    /**
     * Throws {@code INVALID_ARGUMENT} about {@code option} unless {@code port} is 1..65535 and can
     * be bound on 127.0.0.1 right now. (Another process may still take it before we bind it.)
     */
    public static void requireFree(int port, String option) {
        if (port < 1 || port > 65535) {
            throw PidPoolException.invalid(option, "%s must be within 1..65535, was %d", option, port);
        }
        try (ServerSocket socket = new ServerSocket()) {
            // as the servers themselves bind: a port left in TIME_WAIT by a previous run is free
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), port));
        } catch (IOException e) {
            throw PidPoolException.invalid(
                    option, "%s %d is already in use on %s (choose another with %s)", option, port, LOOPBACK, option);
        }
    }

    /** A port that was free on 127.0.0.1 a moment ago: for tests and for {@code --http-port 0}. */
    public static int pickFree() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw PidPoolException.unavailable("no free port on " + LOOPBACK, e);
        }
    }
}
