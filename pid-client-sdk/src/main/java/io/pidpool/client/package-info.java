/**
 * The PidPool client SDK that business servers embed: {@link io.pidpool.client.PidClient} registers
 * the instance with the cluster, receives its share of PIDs (third-party accounts) through {@link
 * io.pidpool.client.PidListener} and guarantees that it stops using a PID before anyone else may
 * start (docs/design.md). {@link io.pidpool.client.SingleFlight} offers business code a cluster
 * single-flight (docs/sdk.md). Everything outside this package is implementation.
 */
package io.pidpool.client;
