package io.pidpool.worker.task;

import java.util.Map;

/**
 * Service-provider interface for the standalone worker: implementations listed in {@code
 * META-INF/services/io.pidpool.worker.task.TaskHandlerProvider} on the class path contribute
 * handlers by task type. Embedders call {@code WorkerPool.Builder.handler(type, handler)} instead.
 */
public interface TaskHandlerProvider {
    /** Handlers by task type; called once at start-up. */
    Map<String, TaskHandler> handlers();
}
