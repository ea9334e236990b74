package io.pidpool.core.config;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Finds {@code PIDPOOL_*} environment variables that name no configuration key: most likely typos
 * that would otherwise leave a key at its default without a word. The server and pid-worker report
 * them as warnings naming the closest known variable; they do not refuse to start, since one
 * environment may hold the variables of both processes.
 */
public final class UnknownVariables {
    /** Every PidPool variable starts with this. */
    public static final String PREFIX = "PIDPOOL_";

    /** Variables of the launch scripts and the log configuration, not of a configuration file. */
    public static final Set<String> PROCESS_VARIABLES = Set.of("PIDPOOL_LOG_FORMAT", "PIDPOOL_CONFIG", "PIDPOOL_HOME");

    /** Prefixes of variables that belong to other tools (the test suites' databases). */
    private static final List<String> FOREIGN_PREFIXES = List.of("PIDPOOL_TEST_");

    private UnknownVariables() {}

    /**
     * One warning per unknown {@code PIDPOOL_*} variable of {@code env}, sorted by name.
     *
     * @param known every variable this process reads, with the configuration key it sets
     */
    public static List<String> warnings(Map<String, String> env, Map<String, String> known) {
        Map<String, String> sorted = new TreeMap<>(known);
        return env.keySet().stream()
                .filter(v -> v.startsWith(PREFIX))
                .filter(v -> !sorted.containsKey(v) && !PROCESS_VARIABLES.contains(v))
                .filter(v -> FOREIGN_PREFIXES.stream().noneMatch(v::startsWith))
                .sorted()
                .map(v -> {
                    String closest = sorted.keySet().stream()
                            .min(Comparator.comparingInt((String k) -> editDistance(v, k))
                                    .thenComparing(k -> k))
                            .orElse(null);
                    return "environment variable " + v + " names no configuration key and is ignored"
                            + (closest == null ? "" : "; did you mean " + closest + " (" + sorted.get(closest) + ")?");
                })
                .toList();
    }

    /** Levenshtein distance: insertions, deletions and substitutions of one character. */
    static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }
}
