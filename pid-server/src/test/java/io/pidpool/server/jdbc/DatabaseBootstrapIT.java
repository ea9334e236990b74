package io.pidpool.server.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.Repositories;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Opening, migrating, health and the UNAVAILABLE path of {@link Database}. */
@ExtendWith(SharedTestDatabases.class)
class DatabaseBootstrapIT {
    private static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");

    @Test
    void migratesOnceAndReopensWithoutChangesOnEveryDatabase() {
        for (TestDatabase db : SharedTestDatabases.available()) {
            try (Database again = Database.open(JdbcSettings.of(db.url(), null, null))) {
                var info = Flyway.configure()
                        .dataSource(again.dataSource())
                        .locations(Database.MIGRATIONS)
                        .table(Database.HISTORY_TABLE)
                        .placeholders(db.dialect().placeholders())
                        .load()
                        .info();
                List<MigrationInfo> applied = List.of(info.applied());

                // every migration once (V1 the schema, V4 the cooldowns, ...), nothing left pending
                assertThat(applied)
                        .as(db.toString())
                        .extracting(m -> m.getVersion().getVersion())
                        .startsWith("1")
                        .contains("3", "4", "6")
                        .doesNotHaveDuplicates();
                assertThat(info.pending()).as(db.toString()).isEmpty();
                assertThat(again.isHealthy()).as(db.toString()).isTrue();
                assertThat(again.dialect()).isEqualTo(db.dialect());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "jdbc:postgresql://127.0.0.1:1/pidpool",
                "jdbc:mariadb://127.0.0.1:1/pidpool",
                "jdbc:h2:tcp://127.0.0.1:1/pidpool"
            })
    void anUnreachableDatabaseIsUnavailable(String url) {
        Throwable thrown = catchThrowable(() ->
                Database.open(JdbcSettings.of(url, "pidpool", "not-logged").withPool(1, Duration.ofMillis(500))));

        assertThat(thrown).isInstanceOf(PidPoolException.class);
        var e = (PidPoolException) thrown;
        assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(e.code().retryable()).isTrue();
        assertThat(e.field()).isEqualTo("database.url");
        assertThat(e.getMessage()).doesNotContain("not-logged");
    }

    @Test
    void aClosedDatabaseAnswersUnavailable() {
        try (TestDatabase db = TestDatabase.h2()) {
            Repositories repos = db.fresh(Clock.systemUTC());
            repos.modules().put(ModuleConfig.of(FIN, 1));
            assertThat(db.database().isHealthy()).isTrue();

            db.database().close();

            Throwable thrown = catchThrowable(() -> repos.modules().find(FIN));
            assertThat(thrown).isInstanceOf(PidPoolException.class);
            assertThat(((PidPoolException) thrown).code()).isEqualTo(ErrorCode.UNAVAILABLE);
            Throwable inTransaction = catchThrowable(() -> repos.transactor().useTransaction(() -> {}));
            assertThat(inTransaction).isInstanceOf(PidPoolException.class);
            assertThat(((PidPoolException) inTransaction).code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(db.database().isHealthy()).isFalse();
        }
    }

    @Test
    void anH2FileDatabaseKeepsItsRowsAcrossRestarts(@TempDir Path dir) {
        String url = "jdbc:h2:file:" + dir.resolve("pidpool").toAbsolutePath();
        try (Database first = Database.open(url, "sa", "")) {
            first.repositories(Clock.systemUTC()).modules().put(ModuleConfig.of(FIN, 3));
        }
        assertThat(Files.exists(dir.resolve("pidpool.mv.db"))).isTrue();

        try (Database second = Database.open(url, "sa", "")) {
            assertThat(second.repositories(Clock.systemUTC()).modules().find(FIN))
                    .contains(ModuleConfig.of(FIN, 3));
        }
    }

    @Test
    void aUrlOfAnotherDatabaseIsRefused() {
        Throwable thrown = catchThrowable(() -> Database.open("jdbc:sqlite:pidpool.db", null, null));

        assertThat(thrown).isInstanceOf(PidPoolException.class);
        assertThat(((PidPoolException) thrown).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(((PidPoolException) thrown).field()).isEqualTo("database.url");
    }
}
