package io.pidpool.examples;

// [quickstart:listener]
import io.pidpool.client.PidAccount;
import io.pidpool.client.PidListener;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The listener of the quick start (docs/sdk-quickstart.md): one logged-in session at the
 * third-party platform per PID this instance holds. The "platform" here only prints; a real one
 * would open a connection with the account's id and password.
 */
public final class PlatformSessions implements PidListener {
    /** What a login gives you; a real platform client would keep its connection here. */
    public record Session(String pid, String endpoint, long monthlyQuota) {}

    // callbacks for different PIDs run concurrently: shared state must be thread-safe
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    @Override
    public void onAssigned(PidAccount account) throws Exception {
        // log in with account.id() and account.secret() (never log the secret; toString() hides it).
        // Throwing refuses the PID: the leader hands it to another instance.
        String endpoint = account.attributes().getOrDefault("endpoint", "https://platform.example");
        sessions.put(account.id(), new Session(account.id(), endpoint, account.monthlyQuota()));
        System.out.println("login " + account.id() + " at " + endpoint);
    }

    @Override
    public void onUpdated(PidAccount before, PidAccount after) {
        // the operator changed quota, password or attributes of a PID we keep holding
        if (!before.secret().equals(after.secret())) {
            System.out.println("re-login " + after.id() + " with its new password");
        }
        sessions.computeIfPresent(
                after.id(),
                (id, s) -> new Session(
                        id, after.attributes().getOrDefault("endpoint", s.endpoint()), after.monthlyQuota()));
    }

    @Override
    public void onRevoked(PidAccount account) {
        // stop using the account before returning: another instance may log in right after
        sessions.remove(account.id());
        System.out.println("logout " + account.id());
    }

    public Optional<Session> session(String pid) {
        return Optional.ofNullable(sessions.get(pid));
    }
}
// [/quickstart:listener]
