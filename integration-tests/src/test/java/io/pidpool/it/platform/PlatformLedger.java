package io.pidpool.it.platform;

import io.pidpool.core.port.Ticker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The platform's rules and its record of everything that happened, without any networking.
 *
 * <p><b>Rules</b> (docs/design.md §1: one terminal per account at a time). A {@link #login} always
 * succeeds and returns a fresh token; if another login to the same account is still open, that
 * earlier login is <em>superseded</em> (the real platform drops it) and the pair is recorded as a
 * {@link DoubleLogin}, the thing that gets real accounts frozen. A login ends by {@link #logout},
 * by being superseded, or when its connection closes ({@link #disconnected}, e.g. the client process
 * was killed). An {@link #action} with a token whose login has ended is refused and recorded as a
 * {@link Violation}: after a move that is a use of the account by an instance that no longer holds
 * it.
 *
 * <p>Every call is stamped with the injected {@link Ticker} (nanoseconds, comparable with {@code
 * System.nanoTime()} of the test JVM when the system ticker is used).
 *
 * <p>Thread-safe: every method is {@code synchronized} on the ledger (calls are short, in memory).
 */
public final class PlatformLedger {
    /** Why a login ended. */
    public enum End {
        /** The holder logged out. */
        LOGGED_OUT,
        /** Another login to the same account replaced it. */
        SUPERSEDED,
        /** The holder's connection closed (process killed or exited) without a logout. */
        DISCONNECTED
    }

    /** What the platform answers to a logout or an action. */
    public enum Answer {
        OK,
        /** Logout of a login that had already ended (superseded or disconnected): harmless, recorded. */
        STALE,
        /** Action with an ended login, or an unknown token: refused and recorded as a violation. */
        REJECTED,
        /** Unknown token or account on logout. */
        UNKNOWN
    }

    public enum Kind {
        LOGIN,
        LOGOUT,
        ACTION,
        DISCONNECT
    }

    /**
     * One login as it is now: open while {@code end} is empty.
     *
     * @param connection the connection it came through (ends with it)
     * @param loginNanos ticker time of the login
     * @param endNanos ticker time it ended, or -1 while open
     * @param end why it ended, or {@code null} while open
     * @param endedBy the token that superseded it, or {@code null}
     */
    public record Login(
            String token,
            String account,
            String client,
            String connection,
            long loginNanos,
            long endNanos,
            End end,
            String endedBy) {
        public boolean isOpen() {
            return end == null;
        }
    }

    /**
     * A call as the platform saw it.
     *
     * @param answer what it answered; {@code OK} for logins and disconnects
     */
    public record Event(Kind kind, String account, String client, String token, long nanos, Answer answer) {}

    /** A login that found another login to the same account still open. */
    public record DoubleLogin(Login superseded, Login next) {
        @Override
        public String toString() {
            return "double login of " + next.account() + ": " + next.client() + " (token " + next.token()
                    + ") logged in while " + superseded.client() + " (token " + superseded.token() + ") was";
        }
    }

    /** Something a well-behaved client never does (see the class comment). */
    public record Violation(String description, Event event) {
        @Override
        public String toString() {
            return description;
        }
    }

    private static final int MAX_EVENTS = 500_000;

    private final Ticker ticker;
    private final Map<String, Login> byToken = new HashMap<>();
    private final Map<String, String> openByAccount = new HashMap<>();
    private final Map<String, List<String>> tokensByAccount = new HashMap<>();
    private final List<Event> events = new ArrayList<>();
    private final List<DoubleLogin> doubleLogins = new ArrayList<>();
    private final List<Violation> violations = new ArrayList<>();
    private long nextToken = 1;
    private long droppedEvents;

    public PlatformLedger(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
    }

    /** {@code client} logs in to {@code account} through {@code connection}; returns the new login's token. */
    public synchronized String login(String account, String client, String connection) {
        long now = ticker.read();
        String token = "t" + nextToken++;
        Login next = new Login(token, account, client, connection, now, -1, null, null);
        String previousToken = openByAccount.put(account, token);
        if (previousToken != null) {
            Login previous = byToken.get(previousToken);
            Login ended = end(previous, now, End.SUPERSEDED, token);
            doubleLogins.add(new DoubleLogin(ended, next));
        }
        byToken.put(token, next);
        tokensByAccount.computeIfAbsent(account, a -> new ArrayList<>()).add(token);
        record(new Event(Kind.LOGIN, account, client, token, now, Answer.OK));
        return token;
    }

    /** Ends the login {@code token}. */
    public synchronized Answer logout(String account, String client, String token) {
        long now = ticker.read();
        Login login = byToken.get(token);
        Answer answer;
        if (login == null || !login.account().equals(account)) {
            answer = Answer.UNKNOWN;
        } else if (login.isOpen()) {
            end(login, now, End.LOGGED_OUT, null);
            answer = Answer.OK;
        } else {
            answer = Answer.STALE;
        }
        Event event = new Event(Kind.LOGOUT, account, client, token, now, answer);
        record(event);
        if (answer == Answer.UNKNOWN) {
            violations.add(new Violation(client + " logged out of " + account + " with unknown token " + token, event));
        }
        return answer;
    }

    /** One command on {@code account} with login {@code token}: refused unless that login is open. */
    public synchronized Answer action(String account, String client, String token) {
        long now = ticker.read();
        Login login = byToken.get(token);
        Answer answer =
                login != null && login.account().equals(account) && login.isOpen() ? Answer.OK : Answer.REJECTED;
        Event event = new Event(Kind.ACTION, account, client, token, now, answer);
        record(event);
        if (answer == Answer.REJECTED) {
            String why = login == null || !login.account().equals(account)
                    ? "unknown token " + token
                    : "its login " + token + " ended (" + login.end() + " at " + login.endNanos() + " ns"
                            + (login.endedBy() == null
                                    ? ""
                                    : ", by " + byToken.get(login.endedBy()).client()) + ")";
            violations.add(new Violation(client + " used " + account + " at " + now + " ns although " + why, event));
        }
        return answer;
    }

    /** The connection closed: every login still open through it ends (the process is gone). */
    public synchronized void disconnected(String connection, String client) {
        long now = ticker.read();
        for (String token : List.copyOf(openByAccount.values())) {
            Login login = byToken.get(token);
            if (login.connection().equals(connection)) {
                end(login, now, End.DISCONNECTED, null);
            }
        }
        record(new Event(Kind.DISCONNECT, "-", client, "-", now, Answer.OK));
    }

    /** Every login to {@code account}, oldest first. */
    public synchronized List<Login> logins(String account) {
        List<Login> logins = new ArrayList<>();
        for (String token : tokensByAccount.getOrDefault(account, List.of())) {
            logins.add(byToken.get(token));
        }
        return logins;
    }

    /** Logins to {@code account} by {@code client}, oldest first. */
    public synchronized List<Login> logins(String account, String client) {
        return logins(account).stream().filter(l -> l.client().equals(client)).toList();
    }

    /** The client with an open login to {@code account}, if any. */
    public synchronized Optional<String> holder(String account) {
        return Optional.ofNullable(openByAccount.get(account))
                .map(t -> byToken.get(t).client());
    }

    /** The open login to {@code account}, if any. */
    public synchronized Optional<Login> openLogin(String account) {
        return Optional.ofNullable(openByAccount.get(account)).map(byToken::get);
    }

    public synchronized Optional<Login> login(String token) {
        return Optional.ofNullable(byToken.get(token));
    }

    public synchronized List<DoubleLogin> doubleLogins() {
        return List.copyOf(doubleLogins);
    }

    public synchronized List<Violation> violations() {
        return List.copyOf(violations);
    }

    /** Every recorded call, oldest first (at most 500,000; see {@link #droppedEvents()}). */
    public synchronized List<Event> events() {
        return List.copyOf(events);
    }

    public synchronized List<Event> events(Predicate<Event> filter) {
        return events.stream().filter(filter).toList();
    }

    public synchronized long droppedEvents() {
        return droppedEvents;
    }

    /** Fails if any login ever found another login to the same account open. */
    public void assertNoDoubleLogin() {
        List<DoubleLogin> found = doubleLogins();
        if (!found.isEmpty()) {
            throw new AssertionError(found.size() + " double login(s) on the platform: " + found);
        }
    }

    /** Fails if any client used an account without an open login of its own, or logged out a stranger's. */
    public void assertNoViolations() {
        List<Violation> found = violations();
        if (!found.isEmpty()) {
            throw new AssertionError(found.size() + " platform violation(s): " + found);
        }
    }

    private Login end(Login login, long now, End end, String endedBy) {
        Login ended = new Login(
                login.token(),
                login.account(),
                login.client(),
                login.connection(),
                login.loginNanos(),
                now,
                end,
                endedBy);
        byToken.put(login.token(), ended);
        openByAccount.remove(login.account(), login.token());
        return ended;
    }

    private void record(Event event) {
        if (events.size() < MAX_EVENTS) {
            events.add(event);
        } else {
            droppedEvents++;
        }
    }
}
