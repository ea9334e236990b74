package io.pidpool.worker.runtime;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * Makes SIGTERM and SIGINT (Ctrl-C) a clean stop with exit code 0, as ZooKeeper's and Kafka's
 * scripts expect of a service: the JVM's own handler exits with 128 + signal (143, 130) after the
 * shutdown hooks ran, which service managers and scripts read as a failure. The handler installed
 * here calls {@code System.exit(0)}, which runs the same shutdown hooks (they close everything in
 * order) and then exits with 0. A second signal while the hooks run changes nothing; SIGKILL is,
 * as always, not a clean stop.
 *
 * <p>Uses {@code sun.misc.Signal} (module {@code jdk.unsupported}, exported to the class path
 * without flags on every JDK since 9): the JDK has no public API to replace a signal's handler.
 */
public final class StopSignals {
    private static final Logger LOG = LoggerFactory.getLogger(StopSignals.class);

    private StopSignals() {}

    /** Installs the handler for TERM and INT; call once from {@code main}, before start-up. */
    public static void exitZeroOnStop(String process) {
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                Signal.handle(new Signal(name), signal -> {
                    LOG.info("{}: SIG{} received, stopping", process, signal.getName());
                    // a thread of its own: System.exit blocks until the hooks finished
                    Thread stop = new Thread(() -> System.exit(0), process + "-stop");
                    stop.start();
                });
            } catch (IllegalArgumentException e) {
                // the signal is unknown on this platform or reserved (e.g. -Xrs): keep the JVM's handler
                LOG.debug("{}: SIG{} keeps the JVM's handler: {}", process, name, e.getMessage());
            }
        }
    }
}
