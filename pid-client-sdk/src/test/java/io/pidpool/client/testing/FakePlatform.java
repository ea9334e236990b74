package io.pidpool.client.testing;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A recording fake of the third-party platform: one login per account at a time. A second
 * concurrent login to one account (the thing that gets real accounts frozen) is recorded as a
 * violation, for the test to fail on.
 *
 * <p>Thread-safe.
 */
public final class FakePlatform {
    private final Map<String, String> sessions = new ConcurrentHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();

    /** {@code who} logs in to {@code pid}. */
    public void login(String pid, String who) {
        String previous = sessions.putIfAbsent(pid, who);
        if (previous != null) {
            violations.add("double login of " + pid + ": " + who + " while " + previous + " is logged in");
        }
    }

    /** {@code who} logs out of {@code pid}. */
    public void logout(String pid, String who) {
        if (!sessions.remove(pid, who)) {
            violations.add(
                    who + " logged out of " + pid + " without being logged in (holder: " + sessions.get(pid) + ")");
        }
    }

    /** Who is logged in to {@code pid}, or {@code null}. */
    public String holder(String pid) {
        return sessions.get(pid);
    }

    public List<String> violations() {
        return List.copyOf(violations);
    }
}
