package io.pidpool.client.internal.quota.testing;

import io.pidpool.client.Permit;
import io.pidpool.client.internal.quota.PermitIssuer;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.UsageEvent;
import io.pidpool.client.internal.quota.UsageEventLog;
import io.pidpool.core.id.SnowflakeIds;
import io.pidpool.core.quota.QuotaMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.redisson.api.RedissonClient;

/**
 * N clients of one cluster, each with its own Redisson client, ledger, hold and permit issuer, as
 * separate SDK instances would be. Closes everything and drops the cluster's keys on {@link #close()}.
 */
public final class QuotaScenario implements AutoCloseable {
    public record Client(RedissonClient redisson, RedissonQuotaLedger ledger, FakeHold hold, PermitIssuer issuer) {}

    private final String url;
    private final String cluster = RedisSupport.randomCluster();
    private final List<Client> clients = new ArrayList<>();

    public QuotaScenario(String url) {
        this.url = url;
    }

    public String cluster() {
        return cluster;
    }

    /** Adds a client holding {@code pids}; {@code configure} may adjust its issuer (e.g. batching). */
    public Client addClient(
            Set<String> pids,
            java.util.function.UnaryOperator<RedissonQuotaLedger.Builder> ledgerTuning,
            java.util.function.UnaryOperator<PermitIssuer.Builder> issuerTuning) {
        int n = clients.size();
        RedissonClient redisson = RedisSupport.client(url);
        RedissonQuotaLedger ledger = ledgerTuning
                .apply(RedisSupport.ledger(redisson, cluster, "client" + n))
                .build();
        FakeHold hold = new FakeHold(pids);
        PermitIssuer issuer = issuerTuning
                .apply(PermitIssuer.builder()
                        .ledger(ledger)
                        .held(hold)
                        .ids(SnowflakeIds.builder().workerId(n).build()))
                .build();
        Client c = new Client(redisson, ledger, hold, issuer);
        clients.add(c);
        return c;
    }

    public Client addClient(Set<String> pids) {
        return addClient(pids, b -> b, b -> b);
    }

    public List<Client> clients() {
        return clients;
    }

    public Client client(int i) {
        return clients.get(i);
    }

    /** Every event of every shard, oldest first within a shard. */
    public List<UsageEvent> allEvents() {
        UsageEventLog log = clients.get(0).ledger().events();
        List<UsageEvent> all = new ArrayList<>();
        for (int s = 0; s < log.keys().shards(); s++) {
            String after = UsageEventLog.START;
            while (true) {
                List<UsageEvent> page = log.read(s, after, 1000);
                if (page.isEmpty()) {
                    break;
                }
                all.addAll(page);
                after = page.get(page.size() - 1).offset();
            }
        }
        return all;
    }

    /** Whether Redis holds the deduction record of {@code permit}. */
    public boolean inLedger(Permit permit) {
        RedissonQuotaLedger ledger = clients.get(0).ledger();
        return clients.get(0)
                        .redisson()
                        .<String, String>getMap(
                                ledger.keys().usage(permit.pid(), new QuotaMonth(permit.month())),
                                org.redisson.client.codec.StringCodec.INSTANCE)
                        .get("d:" + permit.deductionId())
                != null;
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (Client c : clients) {
            try {
                c.issuer().close();
                c.ledger().close();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        if (!clients.isEmpty()) {
            try {
                RedisSupport.drop(
                        clients.get(0).redisson(), clients.get(0).ledger().keys());
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        clients.forEach(c -> c.redisson().shutdown());
        if (failure != null) {
            throw failure;
        }
    }
}
