package io.pidpool.core.ring;

import java.util.Optional;

/**
 * A range whose owner differs between two rings. {@code from} is empty when the old ring had no
 * members, {@code to} is empty when the new ring has none.
 */
public record RangeMove(SlotRange range, Optional<String> from, Optional<String> to) {}
