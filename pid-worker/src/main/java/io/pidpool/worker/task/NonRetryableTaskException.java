package io.pidpool.worker.task;

/** Thrown by a {@link TaskHandler} when retrying cannot help: the task ends FAILED at once. */
public class NonRetryableTaskException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NonRetryableTaskException(String message) {
        super(message);
    }

    public NonRetryableTaskException(String message, Throwable cause) {
        super(message, cause);
    }
}
