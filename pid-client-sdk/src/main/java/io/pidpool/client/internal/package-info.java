/**
 * Implementation of the PidPool SDK; not an API. {@link io.pidpool.client.internal.DefaultPidClient}
 * drives ZooKeeper (registration, caches, heartbeat, acknowledgements); {@link
 * io.pidpool.client.internal.PidTracker} decides, per PID node, which listener call or
 * acknowledgement comes next; {@link io.pidpool.client.internal.Timing}, {@link
 * io.pidpool.client.internal.Lease} and {@link io.pidpool.client.internal.PauseDetector} hold the
 * timing rule of docs/design.md §6.
 */
package io.pidpool.client.internal;
