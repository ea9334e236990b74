/**
 * The task table and its contract: {@link io.pidpool.worker.task.Task}, the status machine
 * {@link io.pidpool.worker.task.TaskStatus}, the {@link io.pidpool.worker.task.TaskStore} port
 * with its Jdbi implementation and Flyway schema, {@link io.pidpool.worker.task.TypedRanges} (what a
 * worker polls: task types and slot ranges), and the handler SPI
 * ({@link io.pidpool.worker.task.TaskHandler}, {@link io.pidpool.worker.task.TaskHandlerProvider}).
 *
 * <p><b>At-least-once.</b> A task may run more than once (a worker dies after the handler returned
 * but before the task was marked DONE, a lease expires during a slow handler, a database outage
 * hides the outcome), never twice at the same time while every handler honours its timeout.
 * Handlers must therefore be idempotent. See {@code docs/worker.md}.
 */
package io.pidpool.worker.task;
