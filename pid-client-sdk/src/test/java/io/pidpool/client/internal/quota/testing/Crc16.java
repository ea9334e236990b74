package io.pidpool.client.internal.quota.testing;

import java.nio.charset.StandardCharsets;

/** Redis Cluster's key slot: CRC16-XMODEM of the key's hash tag (or whole key) mod 16384. */
public final class Crc16 {
    private Crc16() {}

    public static int slot(String key) {
        int open = key.indexOf('{');
        if (open >= 0) {
            int close = key.indexOf('}', open + 1);
            if (close > open + 1) {
                key = key.substring(open + 1, close);
            }
        }
        return crc16(key.getBytes(StandardCharsets.UTF_8)) % 16384;
    }

    static int crc16(byte[] bytes) {
        int crc = 0;
        for (byte b : bytes) {
            crc ^= (b & 0xff) << 8;
            for (int i = 0; i < 8; i++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
                crc &= 0xffff;
            }
        }
        return crc;
    }
}
