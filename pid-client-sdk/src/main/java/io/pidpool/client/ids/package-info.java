/**
 * Snowflake worker ids 0..31 coordinated through ZooKeeper , for the SDK and the server:
 * {@link io.pidpool.client.ids.CuratorWorkerIdRegistry} implements the core port {@link
 * io.pidpool.core.port.WorkerIdRegistry} with EPHEMERAL {@code /worker-ids/<n>} nodes and keeps a
 * PERSISTENT hand-over mark per slot; {@link io.pidpool.client.ids.ClusterSnowflakeIds} issues ids
 * through it and never repeats one across holders of a slot, whatever their clocks do.
 */
package io.pidpool.client.ids;
