package io.pidpool.core.fake;

import io.pidpool.core.contract.QuotaLedgerContract;
import io.pidpool.core.port.QuotaLedger;

class InMemoryQuotaLedgerTest extends QuotaLedgerContract {
    @Override
    protected QuotaLedger createLedger() {
        return new InMemoryQuotaLedger();
    }
}
