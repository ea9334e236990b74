package io.pidpool.server.security;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.OperationLog;
import io.pidpool.core.port.PidRepository;
import io.pidpool.core.port.PidWithModule;
import io.pidpool.core.secret.SecretSealer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Key rotation for stored PID passwords: {@link #status()} counts the accounts per sealing key id,
 * {@link #reseal(String)} moves every account sealed under an older key to the current key of the
 * keyring.
 *
 * <p><b>How a re-seal travels.</b> Not by rewriting rows behind the leader's back: the PID nodes in
 * ZooKeeper carry the sealed password too, and only the leader writes them. The re-seal opens each
 * stale password here and submits ordinary UPDATE batches (at most {@link OperationBatch#MAX_PIDS}
 * PIDs each) with the account's own quota, allowance and attributes; the accepting server seals them
 * under the current key, the leader stores them and rewrites the PID nodes, and the SDKs see an
 * {@code onUpdated} whose password is unchanged. The batches are audited like any other, under the
 * admin's name.
 *
 * <p><b>Race.</b> An UPDATE carries the whole account, so a re-seal must not overtake an operator
 * batch that changes the same PIDs: it refuses ({@code CONFLICT}, field {@code batches}) while any
 * batch is PENDING or DEALING. A batch submitted between that check and the re-seal's own submission
 * is applied first and then overwritten with the values read before it; run the re-seal when nobody
 * else is changing accounts (docs/security.md).
 *
 * <p>Plain passwords exist only in this method's memory, on their way into {@code submit}; they are
 * never logged. Thread-safe (stateless apart from its collaborators).
 */
public final class SecretRotation {
    private static final Logger log = LoggerFactory.getLogger(SecretRotation.class);

    private final SecretSealer sealer;
    private final PidRepository pids;
    private final OperationLog operations;
    private final BiFunction<List<Operation<String>>, String, BatchId> submit;

    /**
     * @param submit records an operator batch ({@code OperatorApi::submit})
     */
    public SecretRotation(
            SecretSealer sealer,
            PidRepository pids,
            OperationLog operations,
            BiFunction<List<Operation<String>>, String, BatchId> submit) {
        this.sealer = requireNonNull(sealer, "sealer");
        this.pids = requireNonNull(pids, "pids");
        this.operations = requireNonNull(operations, "operations");
        this.submit = requireNonNull(submit, "submit");
    }

    /**
     * Which keys sealed the stored accounts.
     *
     * @param currentKeyId the key that seals new passwords
     * @param keyIds every key of this server's keyring
     * @param accountsByKeyId stored accounts per sealing key id (also ids this keyring lacks)
     * @param stale accounts not sealed under the current key
     */
    public record Status(String currentKeyId, List<String> keyIds, Map<String, Integer> accountsByKeyId, int stale) {}

    /**
     * What {@link #reseal} submitted.
     *
     * @param resealed accounts sent for re-sealing
     * @param unopenable ids of accounts sealed under a key id this keyring lacks (left as they are)
     * @param batches the UPDATE batches, to follow with {@code GET /api/v1/batches/{id}}
     */
    public record Report(String currentKeyId, int resealed, List<String> unopenable, List<String> batches) {}

    public Status status() {
        Map<String, Integer> byKey = new TreeMap<>();
        int stale = 0;
        for (PidRecord account : accounts()) {
            byKey.merge(account.secret().keyId(), 1, Integer::sum);
            if (!account.secret().keyId().equals(sealer.currentKeyId())) {
                stale++;
            }
        }
        return new Status(sealer.currentKeyId(), List.copyOf(sealer.keyIds()), byKey, stale);
    }

    /**
     * Submits UPDATE batches that re-seal every account not sealed under the current key.
     *
     * @param requestedBy who asked (the admin token's name), recorded with the batches
     * @throws PidPoolException {@code CONFLICT} ({@code batches}) while an operator batch is pending
     */
    public Report reseal(String requestedBy) {
        List<BatchRecord> unfinished = operations.findUnfinished(1);
        if (!unfinished.isEmpty()) {
            throw new PidPoolException(
                    ErrorCode.CONFLICT,
                    "batches",
                    "batch " + unfinished.get(0).id() + " is "
                            + unfinished.get(0).status() + "; re-seal once no batch is pending or dealing");
        }
        String current = sealer.currentKeyId();
        List<PidSpec<String>> specs = new ArrayList<>();
        List<String> unopenable = new ArrayList<>();
        java.util.Set<String> unknownKeys = new java.util.TreeSet<>();
        for (PidRecord account : accounts()) {
            if (account.secret().keyId().equals(current)) {
                continue;
            }
            if (!sealer.canOpen(account.secret())) {
                unopenable.add(account.id());
                unknownKeys.add(account.secret().keyId());
                continue;
            }
            specs.add(new PidSpec<>(
                    account.id(),
                    sealer.open(account.secret()),
                    account.monthlyQuota(),
                    account.overageAllowance(),
                    account.attributes()));
        }
        List<String> batches = new ArrayList<>();
        for (int from = 0; from < specs.size(); from += OperationBatch.MAX_PIDS) {
            List<PidSpec<String>> chunk = specs.subList(from, Math.min(specs.size(), from + OperationBatch.MAX_PIDS));
            BatchId id = submit.apply(List.of(new Operation.Update<>(List.copyOf(chunk))), requestedBy);
            batches.add(id.toString());
        }
        if (!unopenable.isEmpty()) {
            log.warn(
                    "{} accounts are sealed under key ids this keyring lacks ({}); they were not re-sealed",
                    unopenable.size(),
                    unknownKeys);
        }
        log.info(
                "re-seal under key {} requested by {}: {} accounts in {} UPDATE batches",
                current,
                requestedBy,
                specs.size(),
                batches.size());
        return new Report(current, specs.size(), List.copyOf(unopenable), List.copyOf(batches));
    }

    private List<PidRecord> accounts() {
        List<PidRecord> all = new ArrayList<>();
        for (PidWithModule module : pids.loadPidWithModule()) {
            all.addAll(module.pids());
        }
        return all;
    }
}
