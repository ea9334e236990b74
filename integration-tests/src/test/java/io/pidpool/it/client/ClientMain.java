package io.pidpool.it.client;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.client.Registration;
import io.pidpool.client.SecretOpener;
import io.pidpool.client.testing.TestSecrets;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.it.platform.PlatformClient;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A business server in a box, run by {@link ClientProcess} in its own JVM: a real {@link PidClient}
 * whose listener logs in to the {@code PlatformServer} on {@code onAssigned} and logs out on {@code
 * onRevoked}, and an application loop that runs one platform command per held PID every {@code
 * actionIntervalMs}, asking {@link PidClient#heldPids()} each time (a use after a move would be
 * recorded by the platform).
 *
 * <p>Arguments, {@code key=value}: {@code name, connect, cluster, module, sessionTimeoutMs, prefix,
 * platform} (host:port), optional {@code actionIntervalMs} (default 50) and {@code secretKey} (base64
 * AES key the leader seals passwords with; default: the SDK's {@code TestSecrets}).
 *
 * <p>Speaks to the test on stdout, one line per fact, each starting with {@code @@} (logging goes to
 * stderr): {@code STARTED}, {@code REGISTERED <instance> <sessionHex> <negotiatedTimeoutMs>
 * <pidsPath|->}, {@code STATE <state>}, {@code ASSIGNED <pid>}, {@code REVOKED <pid>}, {@code HELD
 * <pid,pid|->}, {@code REJECTED <pid>}, {@code CLOSED}, {@code FAILED <message>}. Reads commands on
 * stdin: {@code close} (graceful close, then exit 0). End of stdin (the test JVM died) closes and
 * exits too, so no client outlives its test.
 *
 * <p>Concurrency: listener callbacks run on the SDK's callback threads, the application loop and the
 * watcher on their own threads. Per PID, a lock makes an action and a logout mutually exclusive, so
 * that {@code onRevoked} returns only after the last action on the PID was answered (the listener
 * contract: stop using the account before returning).
 */
public final class ClientMain {
    private final PrintStream out;
    private final PlatformClient platform;
    private final Map<String, String> tokens = new ConcurrentHashMap<>();
    private final Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();

    private ClientMain(PrintStream out, PlatformClient platform) {
        this.out = out;
        this.platform = platform;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            opts.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        String name = required(opts, "name");
        long actionInterval = Long.parseLong(opts.getOrDefault("actionIntervalMs", "50"));
        ClientMain app;
        PidClient client;
        try {
            app = new ClientMain(out, PlatformClient.connect(required(opts, "platform"), name));
            client = PidClient.builder()
                    .connectString(required(opts, "connect"))
                    .cluster(required(opts, "cluster"))
                    .module(required(opts, "module"))
                    .instanceId(required(opts, "prefix"))
                    .host("it-" + name)
                    .sessionTimeout(Duration.ofMillis(Long.parseLong(required(opts, "sessionTimeoutMs"))))
                    .startTimeout(Duration.ofSeconds(30))
                    .closeTimeout(Duration.ofSeconds(10))
                    .secretOpener(
                            opts.containsKey("secretKey")
                                    ? sealerOpener(SecretSealer.fromSingleKey(opts.get("secretKey")))
                                    : TestSecrets.opener())
                    .listener(app.listener())
                    .build();
            client.start();
        } catch (RuntimeException | IOException e) {
            out.println("@@ FAILED " + e);
            System.exit(2);
            return;
        }
        app.say("STARTED");
        daemon("watch-" + name, () -> app.watch(client));
        daemon("act-" + name, () -> app.act(client, actionInterval));

        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.strip().equals("close")) {
                break;
            }
        }
        client.close();
        app.say("CLOSED");
        System.exit(0);
    }

    private PidListener listener() {
        return new PidListener() {
            @Override
            public void onAssigned(PidAccount account) throws Exception {
                String pid = account.id();
                ReentrantLock lock = lock(pid);
                lock.lock();
                try {
                    if (!account.secret().equals("pw-" + pid)) {
                        throw new IllegalStateException("wrong password for " + pid);
                    }
                    tokens.put(pid, platform.login(pid));
                } finally {
                    lock.unlock();
                }
                say("ASSIGNED " + pid);
            }

            @Override
            public void onRevoked(PidAccount account) {
                String pid = account.id();
                ReentrantLock lock = lock(pid);
                lock.lock();
                try {
                    String token = tokens.remove(pid);
                    if (token != null) {
                        platform.logout(pid, token);
                    }
                } catch (IOException e) {
                    say("FAILED logout " + pid + ": " + e);
                } finally {
                    lock.unlock();
                }
                say("REVOKED " + pid);
            }
        };
    }

    /** The application: one command per held PID per round, each right after a fresh hold check. */
    private void act(PidClient client, long intervalMs) {
        while (true) {
            Duration t = client.registration().map(Registration::sessionTimeout).orElse(Duration.ofSeconds(1));
            // the SDK's lease margin (T/10) covers check-to-use; stay well inside it
            long maxAge = t.toNanos() / 20;
            for (String pid : new TreeSet<>(client.heldPids())) {
                long checkedAt = System.nanoTime();
                if (!client.heldPids().contains(pid)) {
                    continue;
                }
                ReentrantLock lock = lock(pid);
                lock.lock();
                try {
                    String token = tokens.get(pid);
                    if (token != null
                            && platform.actionIfFresh(pid, token, checkedAt, maxAge)
                                    == PlatformClient.ActionResult.REJECTED) {
                        say("REJECTED " + pid);
                    }
                } catch (IOException e) {
                    say("FAILED action " + pid + ": " + e);
                } finally {
                    lock.unlock();
                }
            }
            pause(intervalMs);
        }
    }

    /** Reports registration, state and held-set changes. */
    private void watch(PidClient client) {
        Optional<Registration> lastRegistration = Optional.empty();
        PidClient.State lastState = null;
        Set<String> lastHeld = null;
        while (true) {
            Optional<Registration> registration = client.registration();
            if (registration.isPresent() && !registration.equals(lastRegistration)) {
                Registration r = registration.get();
                say("REGISTERED " + r.instanceId() + " " + Long.toHexString(r.sessionId()) + " "
                        + r.sessionTimeout().toMillis() + " " + (r.handshakeDone() ? r.pidsPath() : "-"));
            }
            lastRegistration = registration;
            PidClient.State state = client.state();
            if (state != lastState) {
                say("STATE " + state);
                lastState = state;
            }
            Set<String> held = new TreeSet<>(client.heldPids());
            if (!held.equals(lastHeld)) {
                say("HELD " + (held.isEmpty() ? "-" : String.join(",", held)));
                lastHeld = held;
            }
            pause(10);
        }
    }

    private ReentrantLock lock(String pid) {
        return locks.computeIfAbsent(pid, p -> new ReentrantLock());
    }

    private void say(String line) {
        out.println("@@ " + line);
    }

    private static void daemon(String name, Runnable body) {
        Thread thread = new Thread(body, name);
        thread.setDaemon(true);
        thread.start();
    }

    private static void pause(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String required(Map<String, String> opts, String key) {
        String value = opts.get(key);
        if (value == null) {
            throw new IllegalArgumentException("missing argument " + key + "=...");
        }
        return value;
    }

    private static SecretOpener sealerOpener(SecretSealer sealer) {
        return (keyId, ciphertext) -> sealer.open(new SealedSecret(keyId, ciphertext));
    }
}
