package io.pidpool.core.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The third-party platform: records every login (the start of {@code onAssigned}) and logout (the
 * return of {@code onRevoked}, a refused login, or the death of the process) per PID, and checks the
 * product's promise on every record: no two instances hold one PID at once. It knows nothing of
 * grace periods or planners; a hold is judged by these records alone.
 *
 * <p>Concurrency: single-threaded on the {@link SimScheduler}.
 */
public final class SimPlatform {
    /** One hold: from login until logout ({@code until} = -1 while it lasts). */
    public record Hold(String pid, String holder, long since, long until) {}

    private final SimScheduler sched;
    private final Map<String, Map<String, Long>> current = new HashMap<>();
    private final List<Hold> finished = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final Map<String, Long> lastHeld = new LinkedHashMap<>();

    public SimPlatform(SimScheduler sched) {
        this.sched = sched;
    }

    public void login(String pid, String holder) {
        Map<String, Long> holders = current.computeIfAbsent(pid, k -> new LinkedHashMap<>());
        for (var other : holders.entrySet()) {
            if (!other.getKey().equals(holder)) {
                String v = "PID " + pid + " logged in by " + holder + " while " + other.getKey() + " holds it (since "
                        + SimScheduler.fmt(other.getValue()) + ")";
                violations.add(SimScheduler.fmt(sched.now()) + " " + v);
                sched.note("VIOLATION exclusive hold: " + v);
            }
        }
        if (holders.containsKey(holder)) {
            String v = "PID " + pid + " logged in again by " + holder + " while it holds it";
            violations.add(SimScheduler.fmt(sched.now()) + " " + v);
            sched.note("VIOLATION callbacks overlap: " + v);
        }
        holders.put(holder, sched.now());
        sched.trace("platform", "login " + pid + " by " + holder);
    }

    public void logout(String pid, String holder) {
        Map<String, Long> holders = current.get(pid);
        Long since = holders == null ? null : holders.remove(holder);
        if (since != null) {
            finished.add(new Hold(pid, holder, since, sched.now()));
            lastHeld.put(pid, sched.now());
        }
        sched.trace("platform", "logout " + pid + " by " + holder);
    }

    /** The process died: every hold of {@code holderPrefix} ends now. */
    public void died(String holderPrefix) {
        for (var e : current.entrySet()) {
            for (String h : List.copyOf(e.getValue().keySet())) {
                if (h.startsWith(holderPrefix)) {
                    logout(e.getKey(), h);
                }
            }
        }
    }

    /** Who holds {@code pid} now. */
    public List<String> holders(String pid) {
        Map<String, Long> holders = current.get(pid);
        return holders == null ? List.of() : List.copyOf(holders.keySet());
    }

    /** Since when {@code pid} has been held without a break by its current holder; -1 if not held. */
    public long heldSince(String pid) {
        Map<String, Long> holders = current.get(pid);
        return holders == null || holders.isEmpty()
                ? -1
                : holders.values().iterator().next();
    }

    public List<String> violations() {
        return violations;
    }

    public int logins() {
        return finished.size() + current.values().stream().mapToInt(Map::size).sum();
    }
}
