package io.pidpool.core.ring;

/** A range of the slot space and the member that owns it. */
public record OwnedRange(SlotRange range, String owner) {}
