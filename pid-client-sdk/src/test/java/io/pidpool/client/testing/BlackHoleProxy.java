package io.pidpool.client.testing;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy with a black-hole switch, to partition one client from a server (e.g. a
 * {@code PidClient} from ZooKeeper) without touching the server or other clients.
 *
 * <p>While {@linkplain #blackHole() black-holed} the proxy forwards no byte in either direction but
 * closes nothing: data read meanwhile is held back (like packets a real network keeps retransmitting)
 * and delivered after {@link #restore()}, if the sockets are still open then. New connections are
 * accepted but stay silent too. So the client sees exactly what a partition looks like: a connection
 * that goes quiet, a read timeout, connection attempts that never complete.
 *
 * <p>Thread-safe. Two daemon threads per connection plus one acceptor; everything ends on {@link
 * #close()}.
 */
public final class BlackHoleProxy implements Closeable {
    private static final AtomicInteger COUNT = new AtomicInteger();

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private final AtomicInteger accepted = new AtomicInteger();
    private volatile boolean blackHoled;
    private volatile boolean closed;

    private BlackHoleProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "blackhole-proxy-accept-" + COUNT.incrementAndGet());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy on a free loopback port forwarding to {@code 127.0.0.1:targetPort}. */
    public static BlackHoleProxy to(int targetPort) {
        return to(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
    }

    public static BlackHoleProxy to(InetSocketAddress target) {
        try {
            return new BlackHoleProxy(target);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return server.getLocalPort();
    }

    /** {@code 127.0.0.1:<port>}, e.g. as a ZooKeeper connect string. */
    public String connectString() {
        return "127.0.0.1:" + port();
    }

    /** Stop forwarding bytes (both directions, all connections, new ones too); close nothing. */
    public void blackHole() {
        blackHoled = true;
    }

    /** Forward again, including what was held back. */
    public void restore() {
        synchronized (gate) {
            blackHoled = false;
            gate.notifyAll();
        }
    }

    public boolean isBlackHoled() {
        return blackHoled;
    }

    /** Connections accepted so far. */
    public int acceptedConnections() {
        return accepted.get();
    }

    /** Closes every current connection (a reset, as opposed to a black hole). */
    public void dropConnections() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        dropConnections();
        restore();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            accepted.incrementAndGet();
            Socket upstream = new Socket();
            try {
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                upstream.connect(target, 5_000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            sockets.add(client);
            sockets.add(upstream);
            start(client, upstream, "up");
            start(upstream, client, "down");
        }
    }

    private void start(Socket from, Socket to, String direction) {
        Thread pump = new Thread(() -> pump(from, to), "blackhole-proxy-" + port() + "-" + direction);
        pump.setDaemon(true);
        pump.start();
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buffer)) != -1) {
                if (!awaitOpen()) {
                    return;
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (SocketException e) {
            // one side closed
        } catch (IOException e) {
            // same
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            sockets.remove(from);
            sockets.remove(to);
        }
    }

    /** Blocks while black-holed; false if the proxy closed meanwhile. */
    private boolean awaitOpen() {
        synchronized (gate) {
            while (blackHoled && !closed) {
                try {
                    gate.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return !closed;
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }
}
