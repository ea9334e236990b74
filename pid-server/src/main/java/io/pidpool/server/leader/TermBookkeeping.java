package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.server.zk.ZkWrite;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The leader's own bookkeeping for one term, beyond what ZooKeeper and the database say: writes in
 * flight, when it saw instances go, unanswered instructions, failure counts and cooldowns, and the
 * assignment rows it knows the database holds. Changed only by {@link #replay(TermEvent)}.
 *
 * <p>A write whose outcome is unknown ({@link TermEvent.WriteInDoubt}) stays in flight until a
 * rescan that started after it is replayed ({@link TermEvent.ViewProven}): the node it may have
 * created or changed is then in the view, or proven absent.
 *
 * <p>Losing it (a new leader) is safe: departures restart their grace at the new leader's election,
 * timers restart, failure counts restart, and database rows are re-diffed; a write left in doubt by the
 * old term either landed before the new term's epoch bump (then the new term's view, scanned or proven
 * after it, holds it) or fails the bump's epoch check.
 *
 * <p>Concurrency: not thread-safe; owned by the leader's serial executor.
 */
public final class TermBookkeeping {
    private final Set<String> pathsInFlight = new HashSet<>();
    private final Map<String, Integer> pidsInFlight = new HashMap<>();
    private final Map<String, Intent> addsInFlight = new HashMap<>();
    private final Set<InstanceKey> handshakesInFlight = new HashSet<>();
    private final Map<InstanceKey, Long> departedAt = new HashMap<>();
    private final Map<InstanceKey, Long> sessions = new HashMap<>();
    private final Map<String, Long> instructionSeen = new HashMap<>();
    private final Map<String, Integer> failures = new HashMap<>();
    private final Map<String, Long> backoffUntil = new HashMap<>();
    private final Map<String, Long> cooldownUntil = new HashMap<>();
    private final Map<String, Assignment> rows = new HashMap<>();
    private final Set<String> alerts = new HashSet<>();
    private final Set<String> revokesSent = new HashSet<>();
    private final Map<InstanceKey, Long> draining = new HashMap<>();
    /** Writes in doubt, in the order they arose, each with the last rescan started before it. */
    private final Deque<Doubt> doubts = new ArrayDeque<>();

    private long rescansStarted;

    private record Doubt(Intent intent, long rescanBefore) {}

    /**
     * Applies one record. A {@link TermEvent.RescanStarted} numbered at or below the last one, or a
     * {@link TermEvent.ViewProven} of a rescan that has not started, is refused with an {@link
     * IllegalArgumentException} and changes nothing.
     */
    public void replay(TermEvent record) {
        if (record instanceof TermEvent.WriteIssued issued) {
            Intent intent = issued.intent();
            for (ZkWrite write : intent.writes()) {
                pathsInFlight.add(write.path());
            }
            if (intent.pid() != null) {
                pidsInFlight.merge(intent.pid(), 1, Integer::sum);
                if (intent.kind() == Intent.Kind.ADD) {
                    addsInFlight.put(intent.pid(), intent);
                }
            }
            if (intent.kind() == Intent.Kind.HANDSHAKE) {
                handshakesInFlight.add(intent.holder());
            }
        } else if (record instanceof TermEvent.WriteSettled settled) {
            settle(settled.intent());
        } else if (record instanceof TermEvent.WriteInDoubt doubt) {
            // still in flight: nothing is decided about its PID and paths until the view is proven
            doubts.addLast(new Doubt(doubt.intent(), rescansStarted));
        } else if (record instanceof TermEvent.RescanStarted started) {
            if (started.rescan() <= rescansStarted) {
                throw new IllegalArgumentException("rescan " + started.rescan() + " started after rescan "
                        + rescansStarted + ": rescans are numbered upwards");
            }
            rescansStarted = started.rescan();
        } else if (record instanceof TermEvent.ViewProven proven) {
            if (proven.rescan() > rescansStarted) {
                throw new IllegalArgumentException(
                        "rescan " + proven.rescan() + " has not started (last started: " + rescansStarted + ")");
            }
            // a rescan that was already running when the doubt arose may have read before the write
            // landed: it proves nothing about it
            while (!doubts.isEmpty() && doubts.peekFirst().rescanBefore() < proven.rescan()) {
                settle(doubts.pollFirst().intent());
            }
        } else if (record instanceof TermEvent.Departed departed) {
            departedAt.putIfAbsent(departed.key(), departed.atNanos());
            sessions.putIfAbsent(departed.key(), departed.sessionId());
            draining.remove(departed.key());
        } else if (record instanceof TermEvent.Seen seen) {
            sessions.put(seen.key(), seen.sessionId());
        } else if (record instanceof TermEvent.RevokeSent sent) {
            revokesSent.add(sent.path());
        } else if (record instanceof TermEvent.RevokesForgotten forgotten) {
            forgotten.paths().forEach(revokesSent::remove);
        } else if (record instanceof TermEvent.Draining drain) {
            draining.putIfAbsent(drain.key(), drain.sinceNanos());
        } else if (record instanceof TermEvent.Returned returned) {
            departedAt.remove(returned.key());
        } else if (record instanceof TermEvent.Forgotten forgotten) {
            departedAt.remove(forgotten.key());
            sessions.remove(forgotten.key());
        } else if (record instanceof TermEvent.InstructionSeen seen) {
            instructionSeen.putIfAbsent(seen.key(), seen.atNanos());
        } else if (record instanceof TermEvent.InstructionsForgotten forgotten) {
            forgotten.keys().forEach(instructionSeen::remove);
        } else if (record instanceof TermEvent.AddFailed failed) {
            failures.merge(failed.pid(), 1, Integer::sum);
            backoffUntil.merge(failed.pid(), failed.retryAtNanos(), Math::max);
        } else if (record instanceof TermEvent.AddSucceeded succeeded) {
            failures.remove(succeeded.pid());
            backoffUntil.remove(succeeded.pid());
        } else if (record instanceof TermEvent.CooldownStarted started) {
            cooldownUntil.put(started.pid(), started.untilNanos());
        } else if (record instanceof TermEvent.CooldownEnded ended) {
            cooldownUntil.remove(ended.pid());
            failures.remove(ended.pid());
            backoffUntil.remove(ended.pid());
        } else if (record instanceof TermEvent.RowsLoaded loaded) {
            rows.clear();
            loaded.rows().forEach(a -> rows.put(a.pidId(), a));
        } else if (record instanceof TermEvent.RowsWritten written) {
            written.upserts().forEach(a -> rows.put(a.pidId(), a));
            written.removed().forEach(rows::remove);
        } else if (record instanceof TermEvent.Alerted alerted) {
            alerts.add(alerted.key());
        } else if (record instanceof TermEvent.AlertCleared cleared) {
            alerts.remove(cleared.key());
        }
    }

    private void settle(Intent intent) {
        for (ZkWrite write : intent.writes()) {
            pathsInFlight.remove(write.path());
        }
        if (intent.pid() != null) {
            pidsInFlight.computeIfPresent(intent.pid(), (k, n) -> n > 1 ? n - 1 : null);
            if (intent.kind() == Intent.Kind.ADD) {
                addsInFlight.remove(intent.pid(), intent);
            }
        }
        if (intent.kind() == Intent.Kind.HANDSHAKE) {
            handshakesInFlight.remove(intent.holder());
        }
    }

    /** Whether a path is written by a write in flight (or in doubt): nothing else is decided about it. */
    public boolean inFlight(String path) {
        return pathsInFlight.contains(path);
    }

    /** Whether a write about the PID is in flight (or in doubt): it is not placed or written again. */
    public boolean pidInFlight(String pid) {
        return pidsInFlight.containsKey(pid);
    }

    /** Whether a handshake of this instance was sent and its outcome is not known yet. */
    public boolean handshakeInFlight(InstanceKey key) {
        return handshakesInFlight.contains(key);
    }

    /** ADDINGs sent but not yet confirmed, by PID. */
    public Map<String, Intent> addsInFlight() {
        return addsInFlight;
    }

    public int writesInFlight() {
        return pathsInFlight.size();
    }

    /** Writes whose outcome is unknown and not proven yet (they count as in flight too). */
    public int writesInDoubt() {
        return doubts.size();
    }

    /** The number of the last rescan started (0: none); the next one is numbered one higher. */
    public long rescansStarted() {
        return rescansStarted;
    }

    public Long departedAt(InstanceKey key) {
        return departedAt.get(key);
    }

    /** The session the instance had, as far as this leader knows (0 = unknown). */
    public long sessionOf(InstanceKey key) {
        return sessions.getOrDefault(key, 0L);
    }

    public Set<InstanceKey> departed() {
        return departedAt.keySet();
    }

    public Long instructionSeen(String key) {
        return instructionSeen.get(key);
    }

    public Set<String> instructionKeys() {
        return instructionSeen.keySet();
    }

    public int failures(String pid) {
        return failures.getOrDefault(pid, 0);
    }

    /** Whether the PID waits out the backoff after a failed ADDING. */
    public boolean backingOff(String pid, long nowNanos) {
        Long backoff = backoffUntil.get(pid);
        return backoff != null && nowNanos - backoff < 0;
    }

    /** Whether the PID may be offered to an instance now (not backing off after a failure, not cooling down). */
    public boolean offerable(String pid, long nowNanos) {
        Long backoff = backoffUntil.get(pid);
        if (backoff != null && nowNanos - backoff < 0) {
            return false;
        }
        return !cooldownUntil.containsKey(pid);
    }

    public Map<String, Long> cooldowns() {
        return cooldownUntil;
    }

    public Map<String, Assignment> rows() {
        return rows;
    }

    public boolean revokeSent(String path) {
        return revokesSent.contains(path);
    }

    public Set<String> revokesSent() {
        return revokesSent;
    }

    /** Whether the instance has been closing for less than {@code windowNanos}. */
    public boolean draining(InstanceKey key, long nowNanos, long windowNanos) {
        Long since = draining.get(key);
        return since != null && nowNanos - since < windowNanos;
    }

    public Set<String> alertKeys() {
        return Set.copyOf(alerts);
    }

    public boolean alerted(String key) {
        return alerts.contains(key);
    }
}
