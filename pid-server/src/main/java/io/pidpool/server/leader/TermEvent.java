package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.model.Assignment;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * A change of the leader's own bookkeeping ({@link TermBookkeeping}). Decisions return records; only
 * {@link TermBookkeeping#replay(TermEvent)} applies them (Kafka's group-coordinator shape), so there is
 * one code path that changes the state.
 */
public sealed interface TermEvent {
    record WriteIssued(Intent intent) implements TermEvent {}

    /** The write's outcome is known: it committed, or ZooKeeper refused it (nothing of it applied). */
    record WriteSettled(Intent intent) implements TermEvent {}

    /**
     * The write's outcome is unknown (connection loss or timeout: it may have been applied). Its PID
     * and paths stay in flight, so nothing is decided about them, until a re-read of the tree that
     * started after this record has been replayed into the view ({@link ViewProven}).
     */
    record WriteInDoubt(Intent intent) implements TermEvent {}

    /**
     * A full re-read of the tree (sync, then scan) started; {@code rescan} numbers it, each greater
     * than the last ({@link TermBookkeeping#rescansStarted()} + 1).
     */
    record RescanStarted(long rescan) implements TermEvent {}

    /**
     * Re-read {@code rescan} completed and its events are replayed into the view: the view is current
     * as of its start, so the writes in doubt since before that start are settled.
     */
    record ViewProven(long rescan) implements TermEvent {}

    /**
     * The record for a write's outcome: {@link WriteInDoubt} when the outcome is unknown ({@link
     * ErrorCode#UNAVAILABLE}), else {@link WriteSettled}.
     *
     * @param error {@code null} if the write committed
     */
    static TermEvent outcome(Intent intent, ErrorCode error) {
        return error == ErrorCode.UNAVAILABLE ? new WriteInDoubt(intent) : new WriteSettled(intent);
    }

    /**
     * The instance's ephemeral node was seen gone at {@code atNanos}; {@code sessionId} is the session
     * it had (0 if this leader never saw it and none of its nodes names one).
     */
    record Departed(InstanceKey key, long atNanos, long sessionId) implements TermEvent {}

    /** The instance's ephemeral node is there, owned by this session. */
    record Seen(InstanceKey key, long sessionId) implements TermEvent {}

    /** The instance's ephemeral node is there (again). */
    record Returned(InstanceKey key) implements TermEvent {}

    /** Nothing of the instance is left in the tree. */
    record Forgotten(InstanceKey key) implements TermEvent {}

    /** An instruction node (path + incarnation/version key) was first seen unanswered at {@code atNanos}. */
    record InstructionSeen(String key, long atNanos) implements TermEvent {}

    record InstructionsForgotten(Collection<String> keys) implements TermEvent {}

    /** An ADDING of {@code pid} failed (error ack or no answer); it is not offered again before {@code retryAtNanos}. */
    record AddFailed(String pid, InstanceKey at, String reason, long retryAtNanos) implements TermEvent {}

    /** {@code pid} was acknowledged ADDED: its failure count starts over. */
    record AddSucceeded(String pid) implements TermEvent {}

    record CooldownStarted(String pid, long untilNanos) implements TermEvent {}

    record CooldownEnded(String pid) implements TermEvent {}

    /** The database holds exactly these assignment rows (read at election or by a reconciliation pass). */
    record RowsLoaded(List<Assignment> rows) implements TermEvent {}

    /** The database now holds these assignment rows (and no longer those of {@code removed}). */
    record RowsWritten(List<Assignment> upserts, Set<String> removed) implements TermEvent {}

    /** The leader wrote DELETING to this node (so a DELETED there is an answer, not a goodbye). */
    record RevokeSent(String path) implements TermEvent {}

    record RevokesForgotten(Collection<String> paths) implements TermEvent {}

    /**
     * The instance answered DELETED where nobody asked: it is closing (it revokes everything, then
     * deletes its ephemeral node). It gets no new PIDs for a while.
     */
    record Draining(InstanceKey key, long sinceNanos) implements TermEvent {}

    record Alerted(String key) implements TermEvent {}

    record AlertCleared(String key) implements TermEvent {}
}
