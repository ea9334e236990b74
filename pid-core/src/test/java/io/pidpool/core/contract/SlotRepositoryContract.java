package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.SlotBinding;
import io.pidpool.core.port.SlotRepository;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every {@link SlotRepository} does. */
public abstract class SlotRepositoryContract extends RepositoryContract {

    @BeforeEach
    void modulesWithThreeAndTwoServers() {
        repos.modules().put(ModuleConfig.of(FIN, 3));
        repos.modules().put(ModuleConfig.of(OPS, 2));
    }

    private SlotRepository slots() {
        return repos.slots();
    }

    @Test
    void bindThenFindOrderedBySlot() {
        var b2 = new SlotBinding(FIN, 2, I1, E1);
        var b0 = new SlotBinding(FIN, 0, I2, E1);
        var o0 = new SlotBinding(OPS, 0, I1, E2);
        slots().bind(b2);
        slots().bind(o0);
        slots().bind(b0);

        assertThat(slots().findByModule(FIN)).containsExactly(b0, b2);
        assertThat(slots().findAll()).containsExactly(b0, b2, o0);
    }

    @Test
    void bindingTheSameAgainRestampsTheEpoch() {
        slots().bind(new SlotBinding(FIN, 1, I1, E1));

        slots().bind(new SlotBinding(FIN, 1, I1, E2));

        assertThat(slots().findByModule(FIN)).containsExactly(new SlotBinding(FIN, 1, I1, E2));
    }

    @Test
    void aHeldSlotOrAnInstanceWithASlotIsAConflict() {
        slots().bind(new SlotBinding(FIN, 0, I1, E1));

        var bySlot = expectError(ErrorCode.CONFLICT, "slot", () -> slots().bind(new SlotBinding(FIN, 0, I2, E2)));
        var byInstance =
                expectError(ErrorCode.CONFLICT, "instance", () -> slots().bind(new SlotBinding(FIN, 1, I1, E2)));

        assertThat(bySlot.getMessage()).contains("host-1");
        assertThat(byInstance.getMessage()).contains("host-1");
        assertThat(slots().findAll()).containsExactly(new SlotBinding(FIN, 0, I1, E1));
    }

    @Test
    void slotBeyondTheServersOrOfAnUnknownModuleIsRejected() {
        expectError(ErrorCode.INVALID_ARGUMENT, "slot", () -> slots().bind(new SlotBinding(FIN, 3, I1, E1)));
        expectError(ErrorCode.NOT_FOUND, "module", () -> slots().bind(
                        new SlotBinding(ModuleKey.parse("no#such#module"), 0, I1, E1)));
        expectError(ErrorCode.INVALID_ARGUMENT, "slot", () -> new SlotBinding(FIN, -1, I1, E1));

        assertThat(slots().findAll()).isEmpty();
    }

    @Test
    void aReleasedSlotGoesToTheReplacementAndOldEpochsAreFenced() {
        slots().bind(new SlotBinding(FIN, 0, I1, E2));
        InstanceId replacement = InstanceId.of("host-1-restarted");

        expectError(ErrorCode.FENCED, "epoch", () -> slots().release(FIN, 0, E1));
        expectError(ErrorCode.FENCED, "epoch", () -> slots().bind(new SlotBinding(FIN, 0, I1, E1)));
        assertThat(slots().release(FIN, 0, E2)).isTrue();
        assertThat(slots().release(FIN, 0, E2)).isFalse();
        slots().bind(new SlotBinding(FIN, 0, replacement, E2));

        assertThat(slots().findByModule(FIN)).containsExactly(new SlotBinding(FIN, 0, replacement, E2));
    }
}
