package io.pidpool.worker.task;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The contract on H2 in memory (embedded: no network, so a surefire test). */
class JdbiTaskStoreH2Test extends TaskStoreContract {
    private TestDatabase db;

    @Override
    protected TaskStore openStore() {
        db = TestDatabase.open(TestDatabase.Kind.H2);
        assertThat(TaskSchema.migrate(db.dataSource())).isEqualTo(1);
        return JdbiTaskStore.create(db.dataSource());
    }

    @Override
    protected void closeStore() {
        db.close();
    }

    @Test
    void migratingTwiceIsANoOp() {
        assertThat(TaskSchema.migrate(db.dataSource())).isZero();
    }
}
