package io.pidpool.core.id;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.model.Names;

/**
 * A Snowflake worker id held by one participant: the slot number (the name of the EPHEMERAL node
 * {@code /worker-ids/<workerId>}) and the owner token written into that node, which lets a process
 * recognise its own slot after a reconnect .
 */
public record WorkerSlot(int workerId, String owner) {
    public WorkerSlot {
        requireArgument(
                workerId >= 0 && workerId < WorkerSlots.COUNT,
                "workerId",
                "workerId must be within 0..%d, was %d",
                WorkerSlots.COUNT - 1,
                workerId);
        Names.requireToken(owner, "owner");
    }
}
