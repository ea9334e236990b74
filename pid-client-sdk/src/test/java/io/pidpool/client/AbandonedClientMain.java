package io.pidpool.client;

import io.pidpool.client.testing.SdkHarness;
import io.pidpool.client.testing.TestSecrets;
import java.time.Duration;

/**
 * A business server's {@code main} that starts a client, waits for a PID and returns without {@code
 * close()}, run in its own JVM by {@link PidClientJvmExitIT}. Arguments: connect string, cluster,
 * Redis URL or {@code -}, {@code closeOnJvmExit}, and optionally {@code start-only} (return right after
 * {@code start()}, for {@code StartBenchmark}'s cold starts). Prints {@code START <ms>} (build and
 * start in this fresh JVM), {@code REGISTERED <instance>}, {@code HELD}, {@code ASSIGNED <pid>} and
 * {@code REVOKED <pid>} on standard output.
 */
public final class AbandonedClientMain {
    private AbandonedClientMain() {}

    public static void main(String[] args) throws Exception {
        long begin = System.nanoTime();
        PidClient.Builder builder = PidClient.builder()
                .connectString(args[0])
                .cluster(args[1])
                .module(SdkHarness.MODULE.toString())
                .instanceId("abandoned")
                .host("test-host")
                .secretOpener(TestSecrets.opener())
                .sessionTimeout(Duration.ofSeconds(4))
                .closeOnJvmExit(Boolean.parseBoolean(args[3]))
                .listener(new PidListener() {
                    @Override
                    public void onAssigned(PidAccount account) {
                        say("ASSIGNED " + account.id());
                    }

                    @Override
                    public void onRevoked(PidAccount account) {
                        say("REVOKED " + account.id());
                    }
                });
        if (!args[2].equals("-")) {
            builder.redisAddress(args[2]);
        }
        PidClient client = builder.build();
        long built = System.nanoTime();
        client.start();
        long started = System.nanoTime();
        say(String.format(
                java.util.Locale.ROOT, "START build %.1f start %.1f", (built - begin) / 1e6, (started - built) / 1e6));
        say("REGISTERED " + client.registration().orElseThrow().instanceId());
        if (args.length > 4 && args[4].equals("start-only")) {
            return;
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (client.heldPids().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        say(client.heldPids().isEmpty() ? "NOTHING HELD" : "HELD");
        // returns without close(): the JVM must still exit, and give the PID back
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
