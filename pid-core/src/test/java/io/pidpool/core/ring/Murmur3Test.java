package io.pidpool.core.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class Murmur3Test {
    private static int h(String s, int seed) {
        return Murmur3.hash32(s.getBytes(StandardCharsets.UTF_8), seed);
    }

    @Test
    void matchesTheReferenceVectors() {
        // Published test vectors of MurmurHash3_x86_32 (the reference C implementation).
        assertThat(Murmur3.hash32(new byte[0], 0)).isEqualTo(0);
        assertThat(Murmur3.hash32(new byte[0], 1)).isEqualTo(0x514E28B7);
        assertThat(Murmur3.hash32(new byte[0], 0xffffffff)).isEqualTo(0x81F16F39);
        assertThat(Murmur3.hash32(new byte[] {0, 0, 0, 0}, 0)).isEqualTo(0x2362F9DE);
        assertThat(h("aaaa", 0x9747b28c)).isEqualTo(0x5A97808A);
        assertThat(h("aaa", 0x9747b28c)).isEqualTo(0x283E0130);
        assertThat(h("aa", 0x9747b28c)).isEqualTo(0x5D211726);
        assertThat(h("a", 0x9747b28c)).isEqualTo(0x7FA09EA6);
        assertThat(h("Hello, world!", 0x9747b28c)).isEqualTo(0x24884CBA);
        assertThat(h("The quick brown fox jumps over the lazy dog", 0x9747b28c)).isEqualTo(0x2FA826CD);
    }

    @Test
    void unsignedSlotsAreNonNegativeAndBelowTwoToThe32() {
        long slot = Murmur3.unsigned32("The quick brown fox jumps over the lazy dog");
        assertThat(slot).isEqualTo(Integer.toUnsignedLong(h("The quick brown fox jumps over the lazy dog", 0)));
        assertThat(slot).isBetween(0L, ConsistentHashRing.SLOT_COUNT - 1);
        // a value whose signed form is negative maps to the upper half
        assertThat(Murmur3.unsigned32("aaaa")).isEqualTo(Integer.toUnsignedLong(h("aaaa", 0)));
    }
}
