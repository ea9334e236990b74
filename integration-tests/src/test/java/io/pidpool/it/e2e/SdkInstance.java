package io.pidpool.it.e2e;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.it.platform.PlatformClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A business server in the test JVM: a real {@link PidClient} whose listener logs in to the
 * recording platform on {@code onAssigned} and out on {@code onRevoked}, and records every callback.
 * A scenario may hold callbacks at a {@link Gate} to freeze a handoff half-way.
 */
final class SdkInstance implements AutoCloseable {
    enum Kind {
        ASSIGNED,
        REVOKED
    }

    /** A callback that returned (a hold began or ended). */
    record Event(Kind kind, String pid, long nanos) {}

    /** Holds callbacks selected by a predicate until opened (bounded: 20 s, then it lets them pass). */
    static final class Gate {
        private final CountDownLatch open = new CountDownLatch(1);
        private final Predicate<Event> holds;
        private final List<Event> waiting = new CopyOnWriteArrayList<>();

        Gate(Predicate<Event> holds) {
            this.holds = holds;
        }

        void pass(Event about) {
            if (open.getCount() == 0 || !holds.test(about)) {
                return;
            }
            waiting.add(about);
            try {
                open.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Callbacks that have been held here (some may have passed since). */
        List<Event> held() {
            return List.copyOf(waiting);
        }

        void open() {
            open.countDown();
        }
    }

    private final String name;
    private final ModuleKey module;
    private final PlatformClient platform;
    private final PidClient client;
    private final ConcurrentHashMap<String, String> tokens = new ConcurrentHashMap<>();
    private final List<Event> events = new CopyOnWriteArrayList<>();
    private volatile Gate gate;

    SdkInstance(
            String name,
            ModuleKey module,
            String connectString,
            String cluster,
            String platformAddress,
            String key,
            Duration sessionTimeout) {
        this.name = name;
        this.module = module;
        try {
            this.platform = PlatformClient.connect(platformAddress, name);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.client = PidClient.builder()
                .connectString(connectString)
                .cluster(cluster)
                .module(module.toString())
                .instanceId(name)
                .host("e2e-" + name)
                .sessionTimeout(sessionTimeout)
                .startTimeout(Duration.ofSeconds(30))
                .closeTimeout(Duration.ofSeconds(10))
                .secretKey(key)
                .listener(listener())
                .build();
    }

    SdkInstance start() {
        client.start();
        return this;
    }

    private PidListener listener() {
        return new PidListener() {
            @Override
            public void onAssigned(PidAccount account) throws Exception {
                String pid = account.id();
                passGate(new Event(Kind.ASSIGNED, pid, System.nanoTime()));
                if (!account.secret().equals("pw-" + pid)) {
                    throw new IllegalStateException("wrong password for " + pid);
                }
                tokens.put(pid, platform.login(pid));
                events.add(new Event(Kind.ASSIGNED, pid, System.nanoTime()));
            }

            @Override
            public void onRevoked(PidAccount account) {
                String pid = account.id();
                passGate(new Event(Kind.REVOKED, pid, System.nanoTime()));
                String token = tokens.remove(pid);
                if (token != null) {
                    try {
                        platform.logout(pid, token);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                events.add(new Event(Kind.REVOKED, pid, System.nanoTime()));
            }
        };
    }

    private void passGate(Event event) {
        Gate current = gate;
        if (current != null) {
            current.pass(event);
        }
    }

    void gate(Gate value) {
        this.gate = value;
    }

    String name() {
        return name;
    }

    ModuleKey module() {
        return module;
    }

    PidClient client() {
        return client;
    }

    /** PIDs between a returned {@code onAssigned} and an {@code onRevoked} (the listener's view). */
    Set<String> held() {
        return new TreeSet<>(tokens.keySet());
    }

    boolean answered() {
        return client.registration().map(r -> r.handshakeDone()).orElse(false);
    }

    List<Event> events() {
        return List.copyOf(events);
    }

    long count(Kind kind, long afterNanos) {
        return events.stream()
                .filter(e -> e.kind() == kind && e.nanos() > afterNanos)
                .count();
    }

    @Override
    public void close() {
        Gate current = gate;
        if (current != null) {
            current.open();
        }
        client.close();
        try {
            platform.close();
        } catch (IOException e) {
            // best effort
        }
    }
}
