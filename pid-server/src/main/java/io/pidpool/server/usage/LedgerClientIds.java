package io.pidpool.server.usage;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The client ids the database ledger numbers usage under. Redis numbers events per (shard,
 * incarnation, client), the database per client id, so a Redis source becomes one id of its own;
 * usage recovered from the month records, whose numbers are lost, is numbered under a client of its
 * own per shard.
 */
public final class LedgerClientIds {
    private LedgerClientIds() {}

    /**
     * The database client id of a Redis source: {@code <shard>.<incarnation prefix>.<client>}, hashed
     * when longer than 64 characters (the database's token limit).
     */
    public static String forSource(int shard, String incarnation, String clientId) {
        String inc = incarnation.length() > 8 ? incarnation.substring(0, 8) : incarnation;
        String id = shard + "." + (inc.isEmpty() ? "0" : inc) + "." + clientId;
        return id.length() <= 64
                ? id
                : shard + "." + inc + ".h" + sha256Hex(clientId).substring(0, 40);
    }

    /** The database client id under which usage recovered from month records is numbered. */
    public static String recovery(int shard) {
        return "recovered." + shard;
    }

    private static String sha256Hex(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
