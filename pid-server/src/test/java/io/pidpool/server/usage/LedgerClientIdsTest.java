package io.pidpool.server.usage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LedgerClientIdsTest {
    @Test
    void databaseClientIdsStayWithin64TokenCharacters() {
        String inc = "0f8e2c4a-1b2c-4d5e-8f90-123456789abc";
        assertThat(LedgerClientIds.forSource(3, inc, "c1")).isEqualTo("3.0f8e2c4a.c1");
        String longId = LedgerClientIds.forSource(1023, inc, "x".repeat(64));
        assertThat(longId).hasSizeLessThanOrEqualTo(64).matches("[A-Za-z0-9_.-]+");
        assertThat(longId).isNotEqualTo(LedgerClientIds.forSource(1023, inc, "x".repeat(63) + "y"));
    }
}
