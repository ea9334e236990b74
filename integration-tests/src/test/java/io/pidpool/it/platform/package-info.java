/**
 * A recording fake of the third-party platform (docs/design.md §1): one login per account at a time,
 * reachable over loopback TCP so that client JVMs log in, act and log out through it. {@link
 * io.pidpool.it.platform.PlatformLedger} decides and records, {@link
 * io.pidpool.it.platform.PlatformServer} serves it, {@link io.pidpool.it.platform.PlatformClient} is
 * what a client process uses.
 */
package io.pidpool.it.platform;
