package io.pidpool.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LifecycleTest {
    final List<String> closed = new ArrayList<>();
    final Lifecycle lifecycle = new Lifecycle("test");

    AutoCloseable part(String name) {
        return () -> closed.add(name);
    }

    @Test
    void closesInReverseStartOrder() {
        lifecycle.add("zk", part("zk"));
        lifecycle.add("db", part("db"));
        lifecycle.add("http", part("http"));
        lifecycle.close();
        assertThat(closed).containsExactly("http", "db", "zk");
    }

    @Test
    void aFailingCloseDoesNotStopTheRest() {
        lifecycle.add("zk", part("zk"));
        lifecycle.add("broken", () -> {
            throw new IllegalStateException("boom");
        });
        lifecycle.add("http", part("http"));
        lifecycle.close();
        assertThat(closed).containsExactly("http", "zk");
    }

    @Test
    void closeIsIdempotent() {
        lifecycle.add("zk", part("zk"));
        lifecycle.close();
        lifecycle.close();
        assertThat(closed).containsExactly("zk");
        assertThat(lifecycle.isClosed()).isTrue();
    }

    @Test
    void whatStartsAfterCloseIsClosedAtOnceAndStopsStartUp() {
        lifecycle.add("zk", part("zk"));
        lifecycle.close();
        assertThatThrownBy(() -> lifecycle.add("redis", part("redis")))
                .isInstanceOf(PidPoolException.class)
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE))
                .hasMessageContaining("redis");
        assertThat(closed).containsExactly("zk", "redis");
        assertThatThrownBy(() -> lifecycle.requireOpen("http")).hasMessageContaining("shutting down");
    }
}
