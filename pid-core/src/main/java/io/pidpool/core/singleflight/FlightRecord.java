package io.pidpool.core.singleflight;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.PidPoolException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;

/**
 * What the result node of a key holds: a holder's claim ({@link Kind#PENDING}), its result ({@link
 * Kind#SUCCESS}) or the failure of its work ({@link Kind#FAILURE}), stamped with the round (the
 * holder's lock, e.g. its node's creation zxid) and the wall time at which it expires.
 *
 * <p>Binary format: magic {@code 'F'}, version 1, kind, round, expiry, then the value (length and
 * bytes) or the failure (type and message). Decoding checks every length; malformed data is an
 * {@code INVALID_ARGUMENT}.
 */
public record FlightRecord(
        Kind kind, long round, long expiresAtMillis, byte[] value, String errorType, String errorMessage) {
    /** Largest result value: 512 KiB, half of ZooKeeper's default 1 MiB packet limit (jute.maxbuffer). */
    public static final int MAX_VALUE_BYTES = 512 * 1024;

    static final int MAX_ERROR_CHARS = 1000;
    private static final int MAGIC = 'F';
    private static final int VERSION = 1;

    public enum Kind {
        /** A holder claimed the key and runs the work; nothing to read yet. */
        PENDING,
        /** The work returned {@link #value()}. */
        SUCCESS,
        /** The work threw; {@link #errorType()} and {@link #errorMessage()} say what. */
        FAILURE
    }

    public FlightRecord {
        requireNonNull(kind, "kind");
        if (kind == Kind.SUCCESS) {
            requireNonNull(value, "value");
            requireArgument(
                    value.length <= MAX_VALUE_BYTES,
                    "value",
                    "a single-flight result may have at most %d bytes, was %d",
                    MAX_VALUE_BYTES,
                    value.length);
            value = value.clone();
        } else {
            value = null;
        }
        if (kind == Kind.FAILURE) {
            errorType = truncate(errorType == null ? "" : errorType);
            errorMessage = truncate(errorMessage == null ? "" : errorMessage);
        } else {
            errorType = null;
            errorMessage = null;
        }
    }

    public static FlightRecord pending(long round, long expiresAtMillis) {
        return new FlightRecord(Kind.PENDING, round, expiresAtMillis, null, null, null);
    }

    public static FlightRecord success(long round, long expiresAtMillis, byte[] value) {
        return new FlightRecord(Kind.SUCCESS, round, expiresAtMillis, value, null, null);
    }

    public static FlightRecord failure(long round, long expiresAtMillis, String errorType, String errorMessage) {
        return new FlightRecord(Kind.FAILURE, round, expiresAtMillis, null, errorType, errorMessage);
    }

    /** A copy of the value (SUCCESS only). */
    @Override
    public byte[] value() {
        return value == null ? null : value.clone();
    }

    public boolean expiredAt(long nowMillis) {
        return nowMillis >= expiresAtMillis;
    }

    public byte[] encode() {
        var bytes = new ByteArrayOutputStream(32 + (value == null ? 0 : value.length));
        try (var out = new DataOutputStream(bytes)) {
            out.writeByte(MAGIC);
            out.writeByte(VERSION);
            out.writeByte(kind.ordinal());
            out.writeLong(round);
            out.writeLong(expiresAtMillis);
            switch (kind) {
                case PENDING -> {}
                case SUCCESS -> {
                    out.writeInt(value.length);
                    out.write(value);
                }
                case FAILURE -> {
                    out.writeUTF(errorType);
                    out.writeUTF(errorMessage);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // cannot happen on a byte array
        }
        return bytes.toByteArray();
    }

    public static FlightRecord decode(byte[] data) {
        if (data == null || data.length < 2 || data[0] != (byte) MAGIC || data[1] != VERSION) {
            throw PidPoolException.invalid("flightRecord", "single-flight result data has a wrong format marker");
        }
        try (var in = new DataInputStream(new ByteArrayInputStream(data, 2, data.length - 2))) {
            int k = in.readUnsignedByte();
            if (k >= Kind.values().length) {
                throw PidPoolException.invalid("flightRecord", "unknown single-flight record kind %d", k);
            }
            Kind kind = Kind.values()[k];
            long round = in.readLong();
            long expires = in.readLong();
            FlightRecord record =
                    switch (kind) {
                        case PENDING -> pending(round, expires);
                        case SUCCESS -> {
                            int n = in.readInt();
                            if (n < 0 || n > MAX_VALUE_BYTES || n > in.available()) {
                                throw PidPoolException.invalid(
                                        "flightRecord", "single-flight result length %d is out of range", n);
                            }
                            byte[] value = new byte[n];
                            in.readFully(value);
                            yield success(round, expires, value);
                        }
                        case FAILURE -> failure(round, expires, in.readUTF(), in.readUTF());
                    };
            if (in.available() != 0) {
                throw PidPoolException.invalid("flightRecord", "single-flight result data has trailing bytes");
            }
            return record;
        } catch (IOException e) {
            throw PidPoolException.invalid("flightRecord", "single-flight result data is truncated");
        }
    }

    private static String truncate(String s) {
        return s.length() <= MAX_ERROR_CHARS ? s : s.substring(0, MAX_ERROR_CHARS);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FlightRecord r
                && kind == r.kind
                && round == r.round
                && expiresAtMillis == r.expiresAtMillis
                && Arrays.equals(value, r.value)
                && java.util.Objects.equals(errorType, r.errorType)
                && java.util.Objects.equals(errorMessage, r.errorMessage);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(kind, round, expiresAtMillis, Arrays.hashCode(value), errorType, errorMessage);
    }

    @Override
    public String toString() {
        return "FlightRecord[" + kind + " round=" + round + " expiresAt=" + expiresAtMillis
                + (value != null ? " " + value.length + " bytes" : "")
                + (errorType != null ? " " + errorType + ": " + errorMessage : "") + "]";
    }
}
