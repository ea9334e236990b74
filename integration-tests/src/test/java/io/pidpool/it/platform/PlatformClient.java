package io.pidpool.it.platform;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A client of {@link PlatformServer} (used inside client JVMs): one connection, one request at a
 * time. Its logins end when it closes or its process dies.
 *
 * <p>Thread-safe: requests are serialized on this object.
 */
public final class PlatformClient implements Closeable {
    /** What {@link #actionIfFresh} did. */
    public enum ActionResult {
        OK,
        REJECTED,
        /** Not sent: the caller's check was older than it allowed. */
        SKIPPED
    }

    private final Socket socket;
    private final BufferedReader in;
    private final OutputStream out;

    private PlatformClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        this.out = socket.getOutputStream();
    }

    /** Connects to {@code host:port} as {@code client}. */
    public static PlatformClient connect(String address, String client) throws IOException {
        int colon = address.lastIndexOf(':');
        Socket socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(
                new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))),
                5_000);
        socket.setSoTimeout(10_000);
        PlatformClient platform = new PlatformClient(socket);
        platform.request("HELLO " + client, Long.MIN_VALUE, 0);
        return platform;
    }

    /** Logs in; returns the login's token. */
    public synchronized String login(String account) throws IOException {
        String answer = request("LOGIN " + account, Long.MIN_VALUE, 0);
        if (!answer.startsWith("OK ")) {
            throw new IOException("login to " + account + " refused: " + answer);
        }
        return answer.substring(3);
    }

    /** Logs out; returns the platform's answer ({@code OK}, {@code STALE}, {@code UNKNOWN}). */
    public synchronized String logout(String account, String token) throws IOException {
        return request("LOGOUT " + account + " " + token, Long.MIN_VALUE, 0);
    }

    /**
     * One command on {@code account}, sent only if the caller's hold check (made at {@code
     * checkedAtNanos}, {@code System.nanoTime()}) is at most {@code maxAgeNanos} old right before the
     * request is written: a process paused between check and use must not act on a stale check (the
     * SDK's lease margin covers this gap, docs/design.md §6).
     */
    public synchronized ActionResult actionIfFresh(String account, String token, long checkedAtNanos, long maxAgeNanos)
            throws IOException {
        String answer = request("ACTION " + account + " " + token, checkedAtNanos, maxAgeNanos);
        if (answer == null) {
            return ActionResult.SKIPPED;
        }
        return "OK".equals(answer) ? ActionResult.OK : ActionResult.REJECTED;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** Writes one line and reads the answer; null if the freshness check failed (nothing written). */
    private String request(String line, long checkedAtNanos, long maxAgeNanos) throws IOException {
        byte[] bytes = (line + "\n").getBytes(StandardCharsets.UTF_8);
        if (checkedAtNanos != Long.MIN_VALUE && System.nanoTime() - checkedAtNanos > maxAgeNanos) {
            return null;
        }
        out.write(bytes);
        out.flush();
        String answer = in.readLine();
        if (answer == null) {
            throw new IOException("platform closed the connection");
        }
        return answer;
    }
}
