/**
 * Snowflake worker ids 0..31 coordinated through ZooKeeper , for the SDK and the server:
 * {@link io.pidpool.client.internal.ids.CuratorWorkerIdRegistry} implements the core port {@link
 * io.pidpool.core.port.WorkerIdRegistry} with EPHEMERAL {@code /worker-ids/<n>} nodes and keeps a
 * PERSISTENT hand-over mark per slot; {@link io.pidpool.client.internal.ids.ClusterSnowflakeIds} issues ids
 * through it and never repeats one across holders of a slot, whatever their clocks do.
 *
 * <p><b>Internal.</b> Not for applications: no compatibility is promised between releases. The server
 * and pid-worker share this code with the SDK (as a broker shares its clients' protocol code); an
 * application uses {@code io.pidpool.client} only.
 */
package io.pidpool.client.internal.ids;
