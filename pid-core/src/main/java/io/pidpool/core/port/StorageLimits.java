package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.SealedSecret;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

/**
 * Sizes every repository accepts, whatever stores it. The database columns are declared with these
 * lengths; the in-memory fakes check the same rules, so a value that fits one store fits all of them
 * and a value that does not is refused up front with {@code INVALID_ARGUMENT} instead of a
 * store-specific truncation error.
 */
public final class StorageLimits {
    /** Longest {@link SealedSecret#encode()} form stored (a 1024-character password seals to ~4.2k). */
    public static final int MAX_SEALED_SECRET = 8000;
    /** Most attributes one PID may carry. */
    public static final int MAX_ATTRIBUTES = 64;
    /** Longest attribute value; names follow {@link Names#requireToken}. */
    public static final int MAX_ATTRIBUTE_VALUE = 1024;
    /** Longest actor / requester name. */
    public static final int MAX_ACTOR = 128;
    /** Longest audit target. */
    public static final int MAX_AUDIT_TARGET = 256;
    /** Longest audit detail; longer details are cut, not refused. */
    public static final int MAX_AUDIT_DETAIL = 4000;
    /** Longest per-operation result message; longer messages are cut, not refused. */
    public static final int MAX_RESULT_MESSAGE = 2000;
    /** Most rows one page query returns. */
    public static final int MAX_PAGE = 10_000;

    private StorageLimits() {}

    /** Instants are stored with millisecond precision everywhere; this is the stored value. */
    public static Instant stored(Instant instant) {
        return instant == null ? null : instant.truncatedTo(ChronoUnit.MILLIS);
    }

    /** Checks that an account's secret and attributes fit the store. */
    public static PidRecord requireStorable(PidRecord pid) {
        requireSecret(pid.secret(), "pid.secret");
        requireAttributes(pid.attributes(), "pid.attributes");
        return pid;
    }

    public static SealedSecret requireSecret(SealedSecret secret, String field) {
        int length = secret.encodedLength();
        requireArgument(
                length <= MAX_SEALED_SECRET,
                field,
                "sealed secret must be at most %d characters encoded, was %d",
                MAX_SEALED_SECRET,
                length);
        return secret;
    }

    public static Map<String, String> requireAttributes(Map<String, String> attributes, String field) {
        requireArgument(
                attributes.size() <= MAX_ATTRIBUTES,
                field,
                "at most %d attributes, got %d",
                MAX_ATTRIBUTES,
                attributes.size());
        attributes.forEach((name, value) -> {
            Names.requireToken(name, field);
            requireArgument(
                    value.length() <= MAX_ATTRIBUTE_VALUE,
                    field,
                    "attribute %s must be at most %d characters, was %d",
                    name,
                    MAX_ATTRIBUTE_VALUE,
                    value.length());
        });
        return attributes;
    }

    /** Validates a page size. */
    public static int requireLimit(int limit) {
        requireArgument(
                limit >= 1 && limit <= MAX_PAGE, "limit", "limit must be within 1..%d, was %d", MAX_PAGE, limit);
        return limit;
    }

    /** Returns {@code text} cut to {@code max} characters. */
    public static String cut(String text, int max) {
        return text.length() <= max ? text : text.substring(0, max);
    }
}
