/**
 * Unique ids: {@link io.pidpool.core.id.SnowflakeIds}, a Snowflake generator that never repeats an id
 * even when the wall clock steps back, and {@link io.pidpool.core.id.WorkerSlots}, the choice of a free
 * worker-id slot 0..31  that a {@link io.pidpool.core.port.WorkerIdRegistry} makes exclusive.
 */
package io.pidpool.core.id;
