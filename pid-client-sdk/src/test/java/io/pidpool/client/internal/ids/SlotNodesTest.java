package io.pidpool.client.internal.ids;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The text formats of {@code /worker-ids/<n>} and {@code /worker-id-marks/<n>}. */
class SlotNodesTest {

    @Test
    void aHolderRoundTripsAndReadsLikeText() {
        SlotHolder holder = new SlotHolder("box-1-7", "box\nwith break", 0xfedcba9876543210L, 1_760_000_000_123L);

        byte[] data = holder.encode();

        assertThat(new String(data, StandardCharsets.UTF_8))
                .isEqualTo("owner=box-1-7\nhost=box with break\nsession=0xfedcba9876543210\n"
                        + "acquiredAt=1760000000123\n");
        assertThat(SlotHolder.decode(data)).isEqualTo(holder);
    }

    @Test
    void aMarkRoundTripsAndNoneMeansNeverHeld() {
        SlotMark mark = new SlotMark(1_760_000_000_999L, "box-1-7", 42);

        assertThat(SlotMark.decode(mark.encode())).isEqualTo(mark);
        assertThat(SlotMark.decode(SlotMark.NONE.encode()).reservedUntilMillis())
                .isEqualTo(-1);
        // a newer writer may add fields
        assertThat(SlotMark.decode("reservedUntil=5\nowner=a\nsession=0x1\nextra=x\n".getBytes(StandardCharsets.UTF_8))
                        .reservedUntilMillis())
                .isEqualTo(5);
    }

    @Test
    void malformedDataIsAnInvalidArgumentNamingTheNodeKind() {
        String[] bad = {
            "",
            "garbage",
            "reservedUntil=x\nowner=a\nsession=0x1\n",
            "reservedUntil=1\nowner=a\n",
            "reservedUntil=1\nowner=a b\nsession=0x1\n",
            "reservedUntil=1\nowner=a\nsession=12\n",
            "reservedUntil=-2\nowner=a\nsession=0x1\n"
        };
        for (String text : bad) {
            assertThatThrownBy(() -> SlotMark.decode(text.getBytes(StandardCharsets.UTF_8)))
                    .as(text)
                    .isInstanceOfSatisfying(
                            PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        }
        assertThatThrownBy(() -> SlotHolder.decode("owner=a\nhost=h\n".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("slotHolder"));
        assertThatThrownBy(() -> SlotHolder.decode(new byte[NodeText.MAX_BYTES + 1]))
                .isInstanceOf(PidPoolException.class);
    }

    @Test
    void theDefaultOwnerIsAValidUniqueToken() {
        String a = SlotNodes.defaultOwner("very.long-host name/with:odd*chars".repeat(3));
        String b = SlotNodes.defaultOwner("very.long-host name/with:odd*chars".repeat(3));

        assertThat(a).matches("[A-Za-z0-9_.\\-]{1,64}").isNotEqualTo(b);
        assertThat(SlotNodes.defaultOwner("..")).startsWith("host-");
    }
}
