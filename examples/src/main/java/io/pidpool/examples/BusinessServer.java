package io.pidpool.examples;

import io.pidpool.client.Permit;
import io.pidpool.client.PidClient;
import io.pidpool.core.error.PidPoolException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The quick start's business server (docs/sdk-quickstart.md): joins the cluster with the SDK, waits
 * for a PID, takes a permit for an order's commands, "sends" them and gives back what it did not use.
 * Settings come from the environment so that the same code runs against a standalone server on a
 * laptop and in the build's QuickstartExampleIT:
 *
 * <pre>
 * PIDPOOL_ZOOKEEPER        127.0.0.1:2181           the servers' zookeeper.connect
 * PIDPOOL_REDIS            redis://127.0.0.1:6380   the servers' redis.address
 * PIDPOOL_SECRET_KEY_FILE  pidpool-data/secret.key  standalone: the data directory's key file
 * PIDPOOL_MODULE           demo#orders#sender       this server's module
 * </pre>
 *
 * Prints one line per step on standard output; logs go to standard error (logback.xml).
 */
public final class BusinessServer {
    private BusinessServer() {}

    public static void main(String[] args) throws Exception {
        String zookeeper = env("PIDPOOL_ZOOKEEPER", "127.0.0.1:2181");
        String redis = env("PIDPOOL_REDIS", "redis://127.0.0.1:6380");
        Path keyFile = Path.of(env("PIDPOOL_SECRET_KEY_FILE", "pidpool-data/secret.key"));
        String module = env("PIDPOOL_MODULE", "demo#orders#sender");

        // [quickstart:client]
        PlatformSessions platform = new PlatformSessions();
        try (PidClient client = PidClient.builder()
                .connectString(zookeeper) // the servers' zookeeper.connect
                .module(module) // department#module#system, as the operator configured it
                .redisAddress(redis) // the servers' redis.address: enables tryAcquire/refund
                .secretKey(Files.readString(keyFile).trim()) // the servers' security.secretKey
                .listener(platform)
                .build()) {
            client.start(); // returns once registered; PIDs arrive when the leader assigns them

            String pid = awaitPid(client, Duration.ofSeconds(60));
            System.out.println("held " + client.heldPids() + ", session at "
                    + platform.session(pid).orElseThrow().endpoint());
            sendOrder(client, "order-4711", 3);
        } // close(): onRevoked for every PID, the leader may move them at once
        // [/quickstart:client]
        System.out.println("done");
    }

    // [quickstart:permit]
    /** Sends an order's commands with a held PID; gives back what was not sent. */
    static void sendOrder(PidClient client, String orderId, int commands) {
        Optional<Permit> permit = client.tryAcquire(commands);
        if (permit.isEmpty()) {
            // no held PID has that many commands left this month (or the hold is not valid
            // right now): try later, or fewer commands
            System.out.println("no quota for " + orderId);
            return;
        }
        Permit p = permit.get();
        System.out.println("permit " + p.commands() + " commands of " + p.pid() + " (" + p.month() + "), deduction "
                + p.deductionId());
        int sent = commands - 1; // say the platform accepted one command less than asked for
        int unused = commands - sent;
        if (unused > 0) {
            // the refund id names this refund of this deduction: a retry with the same id (after a
            // timeout, in another process) is applied once; another refund needs another id
            String refundId = orderId + "-unused";
            try {
                client.refund(p.deductionId(), refundId, unused);
            } catch (PidPoolException e) {
                // UNAVAILABLE: Redis did not answer; retry later with the same refund id
                System.out.println("refund failed, will retry: " + e.getMessage());
                return;
            }
            System.out.println("refunded " + unused + " of " + p.deductionId());
        }
    }
    // [/quickstart:permit]

    /** The first PID this client holds, waiting for the leader's assignment. */
    static String awaitPid(PidClient client, Duration atMost) throws InterruptedException {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (client.heldPids().isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no PID assigned within " + atMost + " (state " + client.state()
                        + "): did the operator add PIDs to the module?");
            }
            Thread.sleep(100);
        }
        return client.heldPids().iterator().next();
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
