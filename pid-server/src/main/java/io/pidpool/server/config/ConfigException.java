package io.pidpool.server.config;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@code server.yml} (or its environment overrides) is unreadable or breaks a rule. Carries every
 * problem found, each naming its key; {@link #field()} is the first one's key. Messages never
 * contain the value of a secret key.
 */
public final class ConfigException extends PidPoolException {
    private static final long serialVersionUID = 1L;

    /** One problem: the key (e.g. {@code security.tokens[0].role}) and what is wrong with it. */
    public record Problem(String key, String message) {
        @Override
        public String toString() {
            return key + ": " + message;
        }
    }

    private final transient List<Problem> problems;

    public ConfigException(List<Problem> problems) {
        super(ErrorCode.INVALID_ARGUMENT, problems.get(0).key(), describe(problems));
        this.problems = List.copyOf(problems);
    }

    public static ConfigException of(String key, String message) {
        return new ConfigException(List.of(new Problem(key, message)));
    }

    public List<Problem> problems() {
        return problems;
    }

    private static String describe(List<Problem> problems) {
        if (problems.size() == 1) {
            return "invalid configuration: " + problems.get(0);
        }
        return "invalid configuration (" + problems.size() + " problems):"
                + problems.stream().map(p -> "\n  - " + p).collect(Collectors.joining());
    }
}
