package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.quota.QuotaMonth;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class DeductionIdsTest {
    @Test
    void encodesMonthShardAndSnowflakeAndReadsThemBack() {
        QuotaMonth month = QuotaMonth.parse("2026-02");
        String id = DeductionIds.encode(month, 15, Long.MAX_VALUE);

        assertThat(id).isEqualTo("202602-15-" + Long.MAX_VALUE);
        assertThat(Names.requireToken(id, "deductionId")).isEqualTo(id);
        assertThat(DeductionIds.parse(id)).isEqualTo(new DeductionIds.Parsed(month, 15, Long.MAX_VALUE));
    }

    @Test
    void anythingElseIsAnInvalidDeductionId() {
        for (String bad : Arrays.asList(
                null,
                "",
                "d1",
                "202613-1-5",
                "2026-11-1-5",
                "202611-1",
                "202611-x-5",
                "202611-1-99999999999999999999")) {
            assertThatThrownBy(() -> DeductionIds.parse(bad))
                    .as(bad)
                    .isInstanceOf(PidPoolException.class)
                    .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                    .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo("deductionId"));
        }
    }
}
