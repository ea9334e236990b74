package io.pidpool.core.fake;

import io.pidpool.core.contract.AlertStoreContract;
import io.pidpool.core.port.AlertStore;

class InMemoryAlertStoreTest extends AlertStoreContract {
    @Override
    protected AlertStore newStore() {
        return new InMemoryAlertStore();
    }
}
