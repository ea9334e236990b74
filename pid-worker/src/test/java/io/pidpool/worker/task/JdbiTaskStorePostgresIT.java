package io.pidpool.worker.task;

import static org.assertj.core.api.Assertions.assertThat;

/** The contract on PostgreSQL ({@code PIDPOOL_TEST_POSTGRES_URL}; skipped when unset). */
class JdbiTaskStorePostgresIT extends TaskStoreContract {
    private TestDatabase db;

    @Override
    protected TaskStore openStore() {
        db = TestDatabase.open(TestDatabase.Kind.POSTGRES);
        assertThat(TaskSchema.migrate(db.dataSource())).isEqualTo(1);
        return JdbiTaskStore.create(db.dataSource());
    }

    @Override
    protected void closeStore() {
        if (db != null) {
            db.close();
        }
    }
}
