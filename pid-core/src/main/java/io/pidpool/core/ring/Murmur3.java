package io.pidpool.core.ring;

import java.nio.charset.StandardCharsets;

/**
 * MurmurHash3 x86_32 (Austin Appleby, public domain), implemented here so the core stays JDK-only.
 * The output is stable across JVMs, versions and machines: slot numbers stored in the task table
 * and ring points computed by different processes must agree, so this function must never change.
 */
public final class Murmur3 {
    private static final int C1 = 0xcc9e2d51;
    private static final int C2 = 0x1b873593;

    private Murmur3() {}

    /** The 32-bit hash of {@code data} with {@code seed}, as a signed int. */
    public static int hash32(byte[] data, int seed) {
        return hash32(data, data.length, seed);
    }

    /** The 32-bit hash of the first {@code len} bytes of {@code data} with {@code seed}. */
    public static int hash32(byte[] data, int len, int seed) {
        int h1 = seed;
        int blocks = len & ~3;
        for (int i = 0; i < blocks; i += 4) {
            int k1 = (data[i] & 0xff)
                    | (data[i + 1] & 0xff) << 8
                    | (data[i + 2] & 0xff) << 16
                    | (data[i + 3] & 0xff) << 24;
            h1 ^= mixK1(k1);
            h1 = Integer.rotateLeft(h1, 13);
            h1 = h1 * 5 + 0xe6546b64;
        }
        int k1 = 0;
        switch (len & 3) {
            case 3:
                k1 ^= (data[blocks + 2] & 0xff) << 16;
            // fall through
            case 2:
                k1 ^= (data[blocks + 1] & 0xff) << 8;
            // fall through
            case 1:
                k1 ^= data[blocks] & 0xff;
                h1 ^= mixK1(k1);
            // fall through
            default:
        }
        h1 ^= len;
        return fmix(h1);
    }

    /** The unsigned 32-bit hash of the UTF-8 bytes of {@code text} with seed 0, in {@code [0, 2^32)}. */
    public static long unsigned32(String text) {
        return Integer.toUnsignedLong(hash32(text.getBytes(StandardCharsets.UTF_8), 0));
    }

    private static int mixK1(int k1) {
        k1 *= C1;
        k1 = Integer.rotateLeft(k1, 15);
        return k1 * C2;
    }

    private static int fmix(int h) {
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }
}
