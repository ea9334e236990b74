package io.pidpool.server.http;

import io.javalin.http.Context;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleKey;
import java.util.List;

/**
 * Path and query parameters, parsed strictly: a bad value is {@code INVALID_ARGUMENT} (400) naming
 * the parameter as its {@code field}. Stateless.
 */
public final class Params {
    private Params() {}

    /** A module key such as {@code fin#risk#scorer} ({@code #} is sent as {@code %23}). */
    public static ModuleKey moduleKey(String text, String field) {
        try {
            return ModuleKey.parse(text);
        } catch (PidPoolException e) {
            throw PidPoolException.invalid(field, "%s", e.getMessage());
        }
    }

    public static long longValue(String text, String field) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw PidPoolException.invalid(field, "%s must be an integer, was '%s'", field, text);
        }
    }

    /** The query parameter {@code name} within {@code 1..max}, or {@code dflt} when absent. */
    public static int limit(Context ctx, String name, int dflt, int max) {
        String text = ctx.queryParam(name);
        if (text == null) {
            return dflt;
        }
        long n = longValue(text, name);
        if (n < 1 || n > max) {
            throw PidPoolException.invalid(name, "%s must be within 1..%d, was %d", name, max, n);
        }
        return (int) n;
    }

    /** An enum constant by name, ignoring case. */
    public static <E extends Enum<E>> E enumValue(Class<E> type, String text, String field) {
        for (E value : type.getEnumConstants()) {
            if (value.name().equalsIgnoreCase(text)) {
                return value;
            }
        }
        throw PidPoolException.invalid(
                field, "%s must be one of %s, was '%s'", field, List.of(type.getEnumConstants()), text);
    }
}
