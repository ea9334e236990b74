package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import java.time.Instant;

/**
 * One audited action: who did what to which target, when. {@code id} is assigned by the caller (a
 * Snowflake id, so ids sort by time). The detail must never contain a secret; it is cut to
 * {@link StorageLimits#MAX_AUDIT_DETAIL} characters.
 *
 * @param action a token such as {@code batch.accepted} or {@code module.put}
 * @param target what the action was about, e.g. a batch id or a module key; may be empty
 */
public record AuditEntry(long id, Instant at, String actor, String action, String target, String detail) {
    public AuditEntry {
        at = StorageLimits.stored(requireNonNull(at, "at"));
        requireNonNull(actor, "actor");
        requireArgument(
                !actor.isEmpty() && actor.length() <= StorageLimits.MAX_ACTOR,
                "actor",
                "actor must be 1..%d characters",
                StorageLimits.MAX_ACTOR);
        Names.requireToken(action, "action");
        target = target == null ? "" : target;
        requireArgument(
                target.length() <= StorageLimits.MAX_AUDIT_TARGET,
                "target",
                "target must be at most %d characters",
                StorageLimits.MAX_AUDIT_TARGET);
        detail = StorageLimits.cut(detail == null ? "" : detail, StorageLimits.MAX_AUDIT_DETAIL);
    }
}
