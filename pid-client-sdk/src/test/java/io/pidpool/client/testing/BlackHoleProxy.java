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
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy with a black-hole switch and a delay, to partition one client from a server
 * (e.g. a {@code PidClient} from ZooKeeper) or make the server look slow to it, without touching the
 * server or other clients.
 *
 * <p>While {@linkplain #blackHole() black-holed} the proxy forwards no byte in either direction but
 * closes nothing: data read meanwhile is held back (like packets a real network keeps retransmitting)
 * and delivered after {@link #restore()}, if the sockets are still open then. New connections are
 * accepted but stay silent too. So the client sees exactly what a partition looks like: a connection
 * that goes quiet, a read timeout, connection attempts that never complete.
 *
 * <p>With a {@linkplain #delay(Duration) delay} every chunk read is forwarded that long after it was
 * read, in order, in both directions: each round trip through the proxy takes twice the delay longer
 * while the bytes keep flowing (a server stalled in GC, an overloaded machine, a long link), so
 * requests sent meanwhile are answered late but all of them are answered. Chunks already waiting keep
 * the delay they were read with.
 *
 * <p>Thread-safe. Four daemon threads per connection (a reader and a writer per direction) plus one
 * acceptor; everything ends on {@link #close()}.
 */
public final class BlackHoleProxy implements Closeable {
    private static final AtomicInteger COUNT = new AtomicInteger();

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private final AtomicInteger accepted = new AtomicInteger();
    private volatile boolean blackHoled;
    private volatile long delayNanos;
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

    /** Forward every byte read from now on {@code oneWay} later (each direction); zero: at once. */
    public void delay(Duration oneWay) {
        delayNanos = oneWay.toNanos();
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

    /** Bytes read at one time, due for forwarding at {@code dueAt}; {@code bytes == null}: end of stream. */
    private record Chunk(long dueAt, byte[] bytes) {}

    private void start(Socket from, Socket to, String direction) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        String name = "blackhole-proxy-" + port() + "-" + direction;
        Thread reader = new Thread(() -> read(from, to, queue), name + "-read");
        Thread writer = new Thread(() -> write(from, to, queue), name + "-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private void read(Socket from, Socket to, BlockingQueue<Chunk> queue) {
        byte[] buffer = new byte[16 * 1024];
        long lastDue = Long.MIN_VALUE;
        try {
            InputStream in = from.getInputStream();
            int n;
            while ((n = in.read(buffer)) != -1) {
                long due = System.nanoTime() + delayNanos;
                if (lastDue != Long.MIN_VALUE && due - lastDue < 0) {
                    due = lastDue; // a shorter delay must not reorder the stream
                }
                lastDue = due;
                queue.add(new Chunk(due, Arrays.copyOf(buffer, n)));
            }
        } catch (IOException e) {
            // one side closed
        } finally {
            queue.add(new Chunk(System.nanoTime(), null));
        }
    }

    private void write(Socket from, Socket to, BlockingQueue<Chunk> queue) {
        try {
            OutputStream out = to.getOutputStream();
            while (true) {
                Chunk chunk = queue.take();
                long wait = chunk.dueAt() - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                if (chunk.bytes() == null || !awaitOpen()) {
                    return;
                }
                out.write(chunk.bytes());
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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
