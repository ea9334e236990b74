package io.pidpool.server.testing;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A recording fake of the third-party platform: one login per account at a time. A second login
 * while another terminal holds the account is recorded as a violation of docs/design.md §2 promise 1; tests assert
 * that there are none.
 */
public final class Platform {
    private final Map<String, String> holders = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();

    public void login(String pid, String terminal) {
        String previous = holders.putIfAbsent(pid, terminal);
        if (previous != null && !previous.equals(terminal)) {
            violations.add(pid + " logged in by " + terminal + " while " + previous + " holds it");
            holders.put(pid, terminal);
        }
    }

    public void logout(String pid, String terminal) {
        holders.remove(pid, terminal);
    }

    /** A process died: whatever it held is no longer held by anyone. */
    public void forget(String terminal) {
        holders.values().removeIf(terminal::equals);
    }

    public Map<String, String> holders() {
        return Map.copyOf(holders);
    }

    public List<String> violations() {
        return List.copyOf(violations);
    }
}
