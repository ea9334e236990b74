package io.pidpool.server.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A database serves one cluster (table {@code pool_cluster}): the first server binds it to its
 * cluster, servers of that cluster find their own binding, a server of another cluster is refused
 * and changes nothing. On H2, and PostgreSQL / MariaDB (each its own schema) when configured.
 */
@ExtendWith(SharedTestDatabases.class)
class ClusterBindingIT {
    static final Instant T1 = Instant.parse("2026-11-03T10:00:00Z");

    @Test
    void theFirstClusterBindsTheDatabaseAndAnotherIsRefused() {
        for (TestDatabase db : SharedTestDatabases.available()) {
            db.fresh(Clock.systemUTC());
            Database database = db.database();

            assertThat(database.bindCluster("newcomer", T1)).as(db.toString()).isEqualTo("newcomer");
            assertThat(database.bindCluster("newcomer", T1.plusSeconds(60))).isEqualTo("newcomer");

            assertThatThrownBy(() -> database.bindCluster("newcomer2", T1))
                    .as(db.toString())
                    .isInstanceOfSatisfying(PidPoolException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE);
                        assertThat(e.field()).isEqualTo("cluster");
                    })
                    .hasMessageContaining("belongs to cluster 'newcomer'")
                    .hasMessageContaining("cluster 'newcomer2'")
                    .hasMessageNotContaining("\n");
            assertThat(database.bindCluster("newcomer", T1)).isEqualTo("newcomer");
        }
    }

    @Test
    void twoServersOfDifferentClustersStartingAtOnceBindItToOne() throws Exception {
        for (TestDatabase db : SharedTestDatabases.available()) {
            db.fresh(Clock.systemUTC());
            Database database = db.database();
            var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
            try {
                var start = new java.util.concurrent.CountDownLatch(1);
                List<java.util.concurrent.Future<String>> results = List.of("a", "b").stream()
                        .map(cluster -> pool.submit(() -> {
                            start.await();
                            try {
                                return database.bindCluster(cluster, T1);
                            } catch (PidPoolException e) {
                                return "refused";
                            }
                        }))
                        .toList();
                start.countDown();
                List<String> outcomes = results.stream()
                        .map(f -> {
                            try {
                                return f.get(30, java.util.concurrent.TimeUnit.SECONDS);
                            } catch (Exception e) {
                                throw new IllegalStateException(e);
                            }
                        })
                        .toList();
                assertThat(outcomes).as(db.toString()).containsOnlyOnce("refused");
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
