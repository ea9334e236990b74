package io.pidpool.worker.ring;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.random.RandomGenerator;

/**
 * Member ids ("machine IP, a random number and the current time, hashed"): the first 64
 * bits of SHA-256 over host, a random long and the wall time in nanoseconds, as 16 lower-case hex
 * digits. Unique in practice; the ring derives its virtual points from this id.
 */
public final class WorkerIdentity {
    private WorkerIdentity() {}

    public static String generate(String host, RandomGenerator random, Clock clock) {
        var now = clock.instant();
        String seed = host + '|' + random.nextLong() + '|' + now.getEpochSecond() + '.' + now.getNano();
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(seed.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }

    /** This machine's host name, or {@code unknown-host}. */
    public static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "unknown-host";
        }
    }
}
