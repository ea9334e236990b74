package io.pidpool.core.model;

/** What applying one operation of a batch did; {@code message} says why when it failed. */
public record OperationResult(int index, boolean ok, String message) {
    public static OperationResult ok(int index) {
        return new OperationResult(index, true, "");
    }

    public static OperationResult failed(int index, String message) {
        return new OperationResult(index, false, message);
    }
}
