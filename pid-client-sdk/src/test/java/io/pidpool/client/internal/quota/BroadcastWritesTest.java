package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BroadcastWritesTest {
    @Test
    void onlyAnEntryOfEpochOneIsAFirstEntry() {
        assertThat(BroadcastWrites.firstEntry("5|1")).isTrue();
        assertThat(BroadcastWrites.firstEntry("1000000|1")).isTrue();
        assertThat(BroadcastWrites.firstEntry("5|2")).isFalse();
        assertThat(BroadcastWrites.firstEntry("5|11")).isFalse();
        assertThat(BroadcastWrites.firstEntry("5|21")).isFalse();
        assertThat(BroadcastWrites.firstEntry("1")).isFalse();
        assertThat(BroadcastWrites.firstEntry(null)).isFalse();
    }
}
