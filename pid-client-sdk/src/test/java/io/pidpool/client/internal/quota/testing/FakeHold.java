package io.pidpool.client.internal.quota.testing;

import io.pidpool.client.internal.quota.HeldPids;
import java.util.Set;
import java.util.function.BooleanSupplier;

/** A {@link HeldPids} a test sets directly. Thread-safe (volatile snapshots). */
public final class FakeHold implements HeldPids {
    private volatile Set<String> pids;
    private volatile BooleanSupplier lease = () -> true;

    public FakeHold(Set<String> pids) {
        this.pids = Set.copyOf(pids);
    }

    @Override
    public Set<String> heldPids() {
        return pids;
    }

    @Override
    public boolean leaseValid() {
        return lease.getAsBoolean();
    }

    public FakeHold hold(Set<String> pids) {
        this.pids = Set.copyOf(pids);
        return this;
    }

    public FakeHold lease(boolean valid) {
        this.lease = () -> valid;
        return this;
    }

    public FakeHold lease(BooleanSupplier lease) {
        this.lease = lease;
        return this;
    }
}
