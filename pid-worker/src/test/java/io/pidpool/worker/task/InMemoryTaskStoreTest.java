package io.pidpool.worker.task;

class InMemoryTaskStoreTest extends TaskStoreContract {
    @Override
    protected TaskStore openStore() {
        return new InMemoryTaskStore();
    }
}
