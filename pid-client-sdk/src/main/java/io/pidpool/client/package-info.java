/**
 * The PidPool client SDK that business servers embed: {@link io.pidpool.client.PidClient} registers
 * the instance with the cluster, receives its share of PIDs (third-party accounts) through {@link
 * io.pidpool.client.PidListener} and guarantees that it stops using a PID before anyone else may
 * start (DESIGN.md §2 promise 1, §6). Everything outside this package is implementation.
 */
package io.pidpool.client;
