package io.pidpool.worker.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy for fault injection: {@link #stop()} drops every connection and refuses new
 * ones (a dead link or a dead server, as the client sees it); {@link #start()} listens again on
 * the same port. Two threads per connection; bounded by the few connections a test opens.
 */
public final class TcpProxy implements AutoCloseable {
    private final InetSocketAddress target;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;
    private volatile int port;
    private volatile long lastForwardedNanos;

    public TcpProxy(String targetHost, int targetPort) {
        this.target = new InetSocketAddress(targetHost, targetPort);
    }

    public synchronized TcpProxy start() throws IOException {
        if (server != null) {
            return this;
        }
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
        port = s.getLocalPort();
        server = s;
        Thread accept = new Thread(() -> acceptLoop(s), "tcp-proxy-accept-" + port);
        accept.setDaemon(true);
        accept.start();
        return this;
    }

    public int port() {
        return port;
    }

    /**
     * {@link System#nanoTime()} of the last bytes forwarded from a client to the target (0 if none):
     * for a ZooKeeper client, the last time its session was touched on the server.
     */
    public long lastForwardedNanos() {
        return lastForwardedNanos;
    }

    /** Closes the listening socket and every proxied connection. */
    public synchronized void stop() {
        ServerSocket s = server;
        server = null;
        if (s != null) {
            closeQuietly(s);
        }
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    @Override
    public void close() {
        stop();
    }

    private void acceptLoop(ServerSocket s) {
        while (!s.isClosed()) {
            Socket client;
            try {
                client = s.accept();
            } catch (IOException e) {
                return;
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(target, 2000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            if (server != s) {
                closeQuietly(client);
                closeQuietly(upstream);
                return;
            }
            sockets.add(client);
            sockets.add(upstream);
            pump(client, upstream, true);
            pump(upstream, client, false);
        }
    }

    private void pump(Socket from, Socket to, boolean toTarget) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buf)) >= 0) {
                            out.write(buf, 0, n);
                            out.flush();
                            if (toTarget) {
                                lastForwardedNanos = System.nanoTime();
                            }
                        }
                    } catch (IOException e) {
                        // connection closed by either side or by stop()
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                        sockets.remove(from);
                        sockets.remove(to);
                    }
                },
                "tcp-proxy-pump-" + port);
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // nothing to do
        }
    }
}
