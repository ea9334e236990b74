/**
 * Implementation of the PidPool SDK; not an API. {@link io.pidpool.client.internal.DefaultPidClient}
 * drives ZooKeeper (registration, caches, heartbeat, acknowledgements); {@link
 * io.pidpool.client.internal.PidTracker} decides, per PID node, which listener call or
 * acknowledgement comes next; {@link io.pidpool.client.internal.Timing}, {@link
 * io.pidpool.client.internal.Lease} and {@link io.pidpool.client.internal.PauseDetector} hold the
 * timing rule of docs/design.md §6.
 *
 * <p><b>Internal.</b> Not for applications: no compatibility is promised between releases. The server
 * and pid-worker share this code with the SDK (as a broker shares its clients' protocol code); an
 * application uses {@code io.pidpool.client} only.
 */
package io.pidpool.client.internal;
