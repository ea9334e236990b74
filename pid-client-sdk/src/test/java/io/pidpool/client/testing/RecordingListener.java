package io.pidpool.client.testing;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A {@link PidListener} that records every call, logs in and out of an optional {@link
 * FakePlatform}, and records as a violation anything the listener contract forbids: overlapping
 * callbacks for one PID, {@code onAssigned} for a PID it holds, {@code onRevoked} or {@code
 * onUpdated} for one it does not. Tests can make {@code onAssigned} throw for chosen PIDs, block it
 * on a latch, or hook extra checks into it.
 *
 * <p>Thread-safe.
 */
public final class RecordingListener implements PidListener {
    public enum Kind {
        ASSIGNED,
        ASSIGN_FAILED,
        UPDATED,
        REVOKED
    }

    public record Event(Kind kind, String pid, PidAccount account, PidAccount before) {}

    private final String name;
    private final FakePlatform platform;
    private final List<Event> events = new CopyOnWriteArrayList<>();
    private final Map<String, PidAccount> held = new ConcurrentHashMap<>();
    private final Set<String> running = ConcurrentHashMap.newKeySet();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final Set<String> failing = ConcurrentHashMap.newKeySet();
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private volatile Consumer<PidAccount> beforeAssign = a -> {};
    private volatile Consumer<PidAccount> beforeRevoke = a -> {};

    public RecordingListener() {
        this("listener", null);
    }

    public RecordingListener(String name, FakePlatform platform) {
        this.name = name;
        this.platform = platform;
    }

    /** {@code onAssigned} throws for these PIDs (like a refused login). */
    public RecordingListener failOn(String... pids) {
        failing.addAll(List.of(pids));
        return this;
    }

    public RecordingListener stopFailingOn(String pid) {
        failing.remove(pid);
        return this;
    }

    /** {@code onAssigned(pid)} blocks until the returned latch is counted down (at most 30 s). */
    public CountDownLatch blockAssign(String pid) {
        CountDownLatch latch = new CountDownLatch(1);
        gates.put(pid, latch);
        return latch;
    }

    /** Runs inside {@code onAssigned}, before it returns; an exception from it is recorded as a violation. */
    public RecordingListener beforeAssign(Consumer<PidAccount> hook) {
        this.beforeAssign = hook;
        return this;
    }

    /** Runs inside {@code onRevoked}, before it returns; an exception from it is recorded as a violation. */
    public RecordingListener beforeRevoke(Consumer<PidAccount> hook) {
        this.beforeRevoke = hook;
        return this;
    }

    @Override
    public void onAssigned(PidAccount account) throws Exception {
        String pid = account.id();
        enter(pid);
        try {
            check(() -> beforeAssign.accept(account));
            CountDownLatch gate = gates.remove(pid);
            if (gate != null && !gate.await(30, TimeUnit.SECONDS)) {
                violations.add("onAssigned(" + pid + ") gate never opened");
            }
            if (failing.contains(pid)) {
                events.add(new Event(Kind.ASSIGN_FAILED, pid, account, null));
                throw new IllegalStateException("login refused for " + pid);
            }
            if (held.putIfAbsent(pid, account) != null) {
                violations.add("onAssigned(" + pid + ") while it is held");
            }
            if (platform != null) {
                platform.login(pid, name);
            }
            events.add(new Event(Kind.ASSIGNED, pid, account, null));
        } finally {
            exit(pid);
        }
    }

    @Override
    public void onUpdated(PidAccount before, PidAccount after) {
        String pid = after.id();
        enter(pid);
        try {
            if (held.replace(pid, after) == null) {
                violations.add("onUpdated(" + pid + ") while it is not held");
            }
            events.add(new Event(Kind.UPDATED, pid, after, before));
        } finally {
            exit(pid);
        }
    }

    @Override
    public void onRevoked(PidAccount account) {
        String pid = account.id();
        enter(pid);
        try {
            check(() -> beforeRevoke.accept(account));
            if (held.remove(pid) == null) {
                violations.add("onRevoked(" + pid + ") while it is not held");
            }
            if (platform != null) {
                platform.logout(pid, name);
            }
            events.add(new Event(Kind.REVOKED, pid, account, null));
        } finally {
            exit(pid);
        }
    }

    /** PIDs between a returned onAssigned and onRevoked, as this listener saw them. */
    public Set<String> held() {
        return new TreeSet<>(held.keySet());
    }

    public PidAccount heldAccount(String pid) {
        return held.get(pid);
    }

    public List<Event> events() {
        return List.copyOf(events);
    }

    public List<Kind> kinds(String pid) {
        List<Kind> kinds = new ArrayList<>();
        for (Event e : events) {
            if (e.pid().equals(pid)) {
                kinds.add(e.kind());
            }
        }
        return kinds;
    }

    public long count(Kind kind, String pid) {
        return events.stream()
                .filter(e -> e.kind() == kind && e.pid().equals(pid))
                .count();
    }

    public long count(Kind kind) {
        return events.stream().filter(e -> e.kind() == kind).count();
    }

    public List<String> violations() {
        return List.copyOf(violations);
    }

    private void enter(String pid) {
        if (!running.add(pid)) {
            violations.add("overlapping callbacks for " + pid);
        }
    }

    private void exit(String pid) {
        running.remove(pid);
    }

    private void check(Runnable hook) {
        try {
            hook.run();
        } catch (RuntimeException | AssertionError e) {
            violations.add("hook failed: " + e);
        }
    }
}
