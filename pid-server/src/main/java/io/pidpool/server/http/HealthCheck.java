package io.pidpool.server.http;

import java.util.Map;

/**
 * The health of this server's dependencies, for {@code /health} and {@code /api/v1/cluster}. Must
 * answer fast (from a recent check, not by probing while the caller waits).
 */
@FunctionalInterface
public interface HealthCheck {
    Report report();

    enum Status {
        UP,
        DOWN
    }

    /** One dependency: {@code UP} or {@code DOWN} and a short human-readable detail (no secrets). */
    record Component(Status status, String detail) {
        public static Component up(String detail) {
            return new Component(Status.UP, detail);
        }

        public static Component down(String detail) {
            return new Component(Status.DOWN, detail);
        }
    }

    /** {@code UP} only when every component is up. */
    record Report(Status status, Map<String, Component> components) {
        public Report {
            components = Map.copyOf(components);
        }

        public static Report of(Map<String, Component> components) {
            boolean up = components.values().stream().allMatch(c -> c.status() == Status.UP);
            return new Report(up ? Status.UP : Status.DOWN, components);
        }
    }
}
