package io.pidpool.core.protocol;

import io.pidpool.core.error.PidPoolException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Shared helpers of the binary node formats: a magic byte and a version first, then fields written
 * with {@link DataOutputStream}. Decoding never trusts lengths: every malformed input becomes an
 * {@link io.pidpool.core.error.ErrorCode#INVALID_ARGUMENT} naming the node kind.
 */
final class WireFormat {
    static final int MAX_STRING = 64 * 1024;
    static final int MAX_BYTES = 64 * 1024;
    static final int MAX_ENTRIES = 1024;

    private WireFormat() {}

    interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    interface Reader<T> {
        T read(DataInputStream in) throws IOException;
    }

    static byte[] encode(int magic, int version, Writer writer) {
        var bytes = new ByteArrayOutputStream(128);
        try (var out = new DataOutputStream(bytes)) {
            out.writeByte(magic);
            out.writeByte(version);
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // cannot happen on a byte array
        }
        return bytes.toByteArray();
    }

    interface VersionedReader<T> {
        T read(DataInputStream in, int version) throws IOException;
    }

    static <T> T decode(byte[] data, int magic, int version, String kind, Reader<T> reader) {
        return decode(data, magic, version, version, kind, (in, v) -> reader.read(in));
    }

    /** Decodes a format that exists in versions {@code minVersion..maxVersion}; the reader gets the version. */
    static <T> T decode(
            byte[] data, int magic, int minVersion, int maxVersion, String kind, VersionedReader<T> reader) {
        if (data == null || data.length < 2) {
            throw PidPoolException.invalid(kind, "%s data is empty or truncated", kind);
        }
        if (data[0] != (byte) magic) {
            throw PidPoolException.invalid(kind, "%s data has a wrong format marker", kind);
        }
        int version = data[1];
        if (version < minVersion || version > maxVersion) {
            if (minVersion == maxVersion) {
                throw PidPoolException.invalid(kind, "%s data has version %d, expected %d", kind, data[1], maxVersion);
            }
            throw PidPoolException.invalid(
                    kind, "%s data has version %d, expected %d..%d", kind, data[1], minVersion, maxVersion);
        }
        try (var in = new DataInputStream(new ByteArrayInputStream(data, 2, data.length - 2))) {
            T value = reader.read(in, version);
            if (in.available() > 0) {
                throw PidPoolException.invalid(kind, "%s data has %d trailing bytes", kind, in.available());
            }
            return value;
        } catch (IOException e) {
            throw PidPoolException.invalid(kind, "%s data is truncated", kind);
        } catch (PidPoolException e) {
            throw e;
        } catch (RuntimeException e) {
            throw PidPoolException.invalid(kind, "%s data is malformed: %s", kind, e.getMessage());
        }
    }

    static void writeString(DataOutputStream out, String value) throws IOException {
        byte[] utf8 = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    static String readString(DataInputStream in, String field) throws IOException {
        return new String(readBytes(in, field, MAX_STRING), java.nio.charset.StandardCharsets.UTF_8);
    }

    static void writeBytes(DataOutputStream out, byte[] value) throws IOException {
        out.writeInt(value.length);
        out.write(value);
    }

    static byte[] readBytes(DataInputStream in, String field, int max) throws IOException {
        int length = in.readInt();
        if (length < 0 || length > max || length > in.available()) {
            throw PidPoolException.invalid(field, "%s has an impossible length %d", field, length);
        }
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return bytes;
    }
}
