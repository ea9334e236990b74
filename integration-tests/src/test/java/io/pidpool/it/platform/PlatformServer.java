package io.pidpool.it.platform;

import io.pidpool.core.port.Ticker;
import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The recording fake platform, served over loopback TCP so that client JVMs log in, act and log out
 * through it. All rules and records live in the {@link PlatformLedger} ({@link #ledger()}); this class
 * only speaks a line protocol (one request line, one answer line, UTF-8):
 *
 * <pre>
 * HELLO &lt;client&gt;             -> OK &lt;connection&gt;      (first line of every connection)
 * LOGIN &lt;account&gt;             -> OK &lt;token&gt;
 * LOGOUT &lt;account&gt; &lt;token&gt;   -> OK | STALE | UNKNOWN
 * ACTION &lt;account&gt; &lt;token&gt;   -> OK | REJECTED
 * </pre>
 *
 * Logins are bound to their connection: when it closes (e.g. the client JVM was killed) its open
 * logins end as {@code DISCONNECTED}. Timestamps come from {@code System.nanoTime()} of this (the
 * test's) JVM, so they compare with the test's own measurements.
 *
 * <p>Thread-safe; one daemon thread per connection plus an acceptor, all ended by {@link #close()}.
 */
public final class PlatformServer implements Closeable {
    private static final AtomicInteger CONNECTIONS = new AtomicInteger();

    private final PlatformLedger ledger = new PlatformLedger(Ticker.system());
    private final ServerSocket server;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    private PlatformServer() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "platform-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A platform on a free loopback port. */
    public static PlatformServer start() {
        try {
            return new PlatformServer();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code 127.0.0.1:<port>}. */
    public String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    public PlatformLedger ledger() {
        return ledger;
    }

    /** See {@link PlatformLedger#assertNoDoubleLogin()}. */
    public void assertNoDoubleLogin() {
        ledger.assertNoDoubleLogin();
    }

    /** See {@link PlatformLedger#assertNoViolations()}. */
    public void assertNoViolations() {
        ledger.assertNoViolations();
    }

    public List<PlatformLedger.Login> logins(String account) {
        return ledger.logins(account);
    }

    public Optional<String> holder(String account) {
        return ledger.holder(account);
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket socket : sockets) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = server.accept();
            } catch (IOException e) {
                return;
            }
            sockets.add(socket);
            String connection = "c" + CONNECTIONS.incrementAndGet();
            Thread handler = new Thread(() -> serve(socket, connection), "platform-" + connection);
            handler.setDaemon(true);
            handler.start();
        }
    }

    private void serve(Socket socket, String connection) {
        String client = "?";
        try (socket;
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
                Writer out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8)) {
            socket.setTcpNoDelay(true);
            String line;
            while ((line = in.readLine()) != null) {
                String[] words = line.strip().split(" ");
                String answer;
                switch (words[0]) {
                    case "HELLO" -> {
                        client = words[1];
                        answer = "OK " + connection;
                    }
                    case "LOGIN" -> answer = "OK " + ledger.login(words[1], client, connection);
                    case "LOGOUT" ->
                        answer = ledger.logout(words[1], client, words[2]).name();
                    case "ACTION" ->
                        answer = ledger.action(words[1], client, words[2]).name();
                    default -> answer = "ERR unknown request '" + line + "'";
                }
                out.write(answer);
                out.write('\n');
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            // the connection broke: handled below like a close
        } finally {
            sockets.remove(socket);
            if (!closed) {
                ledger.disconnected(connection, client);
            }
        }
    }
}
