package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.port.QuotaResetLog;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries the leader's committed quota decisions to a {@link QuotaProvisioner} (Redis) on a thread of
 * its own, so a slow or absent Redis never blocks the leader's serial executor.
 *
 * <p>Three kinds of work, kept until they succeed (a failure is retried after {@code retryDelay}):
 *
 * <ul>
 *   <li><b>limit changes</b> of committed batches (ADD, UPDATE: the new hard limit; DELETE: 0), the
 *       latest value per PID;
 *   <li><b>resets</b> of committed RESET_QUOTA operations, with the time of the commit (so a retry
 *       resets the month the operator meant);
 *   <li><b>a full reconciliation</b> ({@link QuotaReconciliation}): the database's limits of every
 *       PID; the provisioner's limits are read in bulk and only the differences are written (a PID the
 *       database no longer has gets 0). Submitted at the start of every term and every {@code
 *       quotaReconcileInterval}. It supersedes older limit changes; newer ones patch it, so the last
 *       submitted value always wins.
 * </ul>
 *
 * <p>Fencing: limits are written with the epoch of the term that submitted them ({@link #termBegan});
 * the term's first write fences every limit at its epoch ({@link QuotaProvisioner#fenceLimits}), so a
 * deposed leader's drain that is still running cannot write back an old limit afterwards. A write the
 * provisioner refuses as {@code FENCED} drops the term's limit work for good (a newer leader provisions
 * the limits now) instead of being retried.
 *
 * <p>Concurrency: the submit methods are called from the leader's serial executor (any thread is
 * fine); the work runs on one daemon thread; the pending work is guarded by {@code lock}.
 */
final class QuotaSync implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(QuotaSync.class);

    /**
     * One committed RESET_QUOTA of one PID; {@code generation} from the {@link QuotaResetLog} (0: not
     * recorded, an unguarded reset).
     */
    record Reset(String pid, Instant at, long generation) {}

    /** Runs a task after a delay, in order, one at a time (a single thread in production). */
    interface Scheduler {
        void schedule(Runnable task, long delayMillis);
    }

    private final QuotaProvisioner provisioner;
    private final QuotaResetLog resetLog;
    private final QuotaReconciliation reconciliation;
    private final long retryMillis;
    private final ScheduledExecutorService worker; // null when a test schedules
    private final Scheduler scheduler;
    private final Object lock = new Object();
    private final Map<String, Long> pendingLimits = new LinkedHashMap<>();
    private final List<Reset> pendingResets = new ArrayList<>();
    private Map<String, Long> desired; // a full reconciliation to run, or null
    private long desiredGeneration;
    private boolean resetCheck; // compare the reset log with the provisioner's generations
    private boolean drainScheduled;
    private boolean failing;
    private Epoch epoch = Epoch.NONE; // the term whose limits are written
    private boolean fenceDue; // the term has not fenced the limits yet
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong reconciliations = new AtomicLong();
    private final AtomicLong corrections = new AtomicLong();
    private final AtomicLong resetsRepaired = new AtomicLong();

    QuotaSync(QuotaProvisioner provisioner, Duration retryDelay, String nodeId) {
        this(provisioner, QuotaResetLog.none(), retryDelay, nodeId);
    }

    QuotaSync(QuotaProvisioner provisioner, QuotaResetLog resetLog, Duration retryDelay, String nodeId) {
        this.provisioner = provisioner;
        this.resetLog = resetLog;
        this.reconciliation = new QuotaReconciliation(provisioner, resetLog);
        this.retryMillis = Math.max(1, retryDelay.toMillis());
        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pidpool-quota-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        this.scheduler = (task, delay) -> worker.schedule(task, delay, TimeUnit.MILLISECONDS);
    }

    /** For tests: {@code scheduler} must run the tasks one at a time. */
    QuotaSync(QuotaProvisioner provisioner, Duration retryDelay, Scheduler scheduler) {
        this(provisioner, QuotaResetLog.none(), retryDelay, scheduler);
    }

    /** For tests: {@code scheduler} must run the tasks one at a time. */
    QuotaSync(QuotaProvisioner provisioner, QuotaResetLog resetLog, Duration retryDelay, Scheduler scheduler) {
        this.provisioner = provisioner;
        this.resetLog = resetLog;
        this.reconciliation = new QuotaReconciliation(provisioner, resetLog);
        this.retryMillis = Math.max(1, retryDelay.toMillis());
        this.worker = null;
        this.scheduler = scheduler;
    }

    QuotaProvisioner provisioner() {
        return provisioner;
    }

    /** Where RESET_QUOTA is recorded in the batch's transaction ({@code BatchApplier}). */
    QuotaResetLog resetLog() {
        return resetLog;
    }

    /**
     * A term began: its limits are written with {@code leaderEpoch}, and before the first of them every
     * limit is fenced at that epoch.
     */
    void termBegan(Epoch leaderEpoch) {
        synchronized (lock) {
            epoch = leaderEpoch;
            fenceDue = true;
        }
        requestDrain(0);
    }

    /** Limit writes refused because a newer leader had written or fenced the limits. */
    long refused() {
        return refused.get();
    }

    /** A batch committed: these limits changed (0 = deleted) and these PIDs' quota was reset. */
    void committed(Map<String, Long> limits, List<String> resets, Instant at) {
        committed(limits, resets, List.of(), at);
    }

    /**
     * A batch committed: these limits changed (0 = deleted) and these PIDs' quota was reset; {@code
     * recorded} are the resets the batch recorded in the {@link QuotaResetLog} (applied guarded by
     * their generation, at their recorded time).
     */
    void committed(Map<String, Long> limits, List<String> resets, List<QuotaResetLog.Reset> recorded, Instant at) {
        Map<String, QuotaResetLog.Reset> byPid = new HashMap<>();
        recorded.forEach(r -> byPid.put(r.pidId(), r));
        if (limits.isEmpty() && resets.isEmpty()) {
            return;
        }
        synchronized (lock) {
            pendingLimits.putAll(limits);
            if (desired != null) {
                desired.putAll(limits);
                desiredGeneration++;
            }
            resets.forEach(pid -> {
                QuotaResetLog.Reset r = byPid.get(pid);
                pendingResets.add(r == null ? new Reset(pid, at, 0) : new Reset(pid, r.at(), r.generation()));
            });
        }
        requestDrain(0);
    }

    /** Reconcile the provisioner with every limit the database holds (a snapshot, taken now). */
    void reconcile(Map<String, Long> databaseLimits) {
        if (provisioner instanceof LoggingQuotaProvisioner) {
            return; // nothing to compare with
        }
        synchronized (lock) {
            pendingLimits.clear(); // the snapshot includes them
            desired = new HashMap<>(databaseLimits);
            desiredGeneration++;
            resetCheck = true;
        }
        requestDrain(0);
    }

    /** Recorded resets the provisioner had not applied and a reconciliation re-applied. */
    long resetsRepaired() {
        return resetsRepaired.get();
    }

    /** The term ended: a successor provisions the limits; committed resets are still carried out. */
    void termEnded() {
        synchronized (lock) {
            pendingLimits.clear();
            desired = null;
            desiredGeneration++;
            resetCheck = false; // the successor's reconciliation compares the reset log
            epoch = Epoch.NONE;
            fenceDue = false;
        }
    }

    /** Full reconciliations completed so far. */
    long reconciliations() {
        return reconciliations.get();
    }

    /** Limits a reconciliation found wrong (or missing) and wrote. */
    long corrections() {
        return corrections.get();
    }

    /** Whether nothing is waiting (tests). */
    boolean idle() {
        synchronized (lock) {
            return pendingLimits.isEmpty()
                    && pendingResets.isEmpty()
                    && desired == null
                    && !resetCheck
                    && !fenceDue
                    && !drainScheduled;
        }
    }

    private void requestDrain(long delayMillis) {
        synchronized (lock) {
            if (drainScheduled) {
                return;
            }
            drainScheduled = true;
        }
        try {
            scheduler.schedule(this::drain, delayMillis);
        } catch (RejectedExecutionException closed) {
            synchronized (lock) {
                drainScheduled = false;
            }
        }
    }

    private void drain() {
        List<Reset> resets;
        Map<String, Long> limits;
        Map<String, Long> full;
        long generation;
        boolean checkResets;
        Epoch term;
        boolean fence;
        synchronized (lock) {
            drainScheduled = false;
            term = epoch;
            fence = fenceDue;
            checkResets = resetCheck;
            resets = List.copyOf(pendingResets);
            limits = new LinkedHashMap<>(pendingLimits);
            full = desired == null ? null : new HashMap<>(desired);
            generation = desiredGeneration;
        }
        try {
            if (!resets.isEmpty()) {
                Map<Instant, List<String>> byTime = new LinkedHashMap<>();
                for (Reset r : resets) {
                    if (r.generation() > 0) {
                        provisioner.resetOnce(r.pid(), r.generation(), r.at());
                    } else {
                        byTime.computeIfAbsent(r.at(), k -> new ArrayList<>()).add(r.pid());
                    }
                }
                byTime.forEach((at, pids) -> provisioner.reset(pids, at));
                synchronized (lock) {
                    pendingResets.subList(0, resets.size()).clear(); // only this thread removes
                }
                log.info("quota reset of {} PIDs provisioned", resets.size());
            }
            if (fence) {
                provisioner.fenceLimits(term);
                synchronized (lock) {
                    if (epoch.equals(term)) {
                        fenceDue = false;
                    }
                }
                log.info("quota limits fenced at leader epoch {}", term.value());
            }
            if (!limits.isEmpty()) {
                provisioner.setLimits(limits, term);
                synchronized (lock) {
                    limits.forEach(pendingLimits::remove); // Map.remove(key, value): a newer value stays
                }
            }
            if (full != null) {
                int fixed = reconciliation.limits(full, term);
                synchronized (lock) {
                    if (desiredGeneration == generation) {
                        desired = null;
                    }
                }
                reconciliations.incrementAndGet();
                corrections.addAndGet(fixed);
            }
            if (checkResets) {
                int repaired = reconciliation.resets();
                synchronized (lock) {
                    resetCheck = false;
                }
                resetsRepaired.addAndGet(repaired);
            }
            if (failing) {
                failing = false;
                log.info("quota provisioning works again");
            }
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.FENCED) {
                refusedByNewerLeader(term, e);
                return;
            }
            retryLater(e);
            return;
        } catch (RuntimeException e) {
            retryLater(e);
            return;
        }
        synchronized (lock) {
            if (!pendingLimits.isEmpty() || !pendingResets.isEmpty() || desired != null || resetCheck || fenceDue) {
                requestDrain(0);
            }
        }
    }

    /** A newer leader writes the limits now: this term's limit work is dropped, not retried. */
    private void refusedByNewerLeader(Epoch term, PidPoolException e) {
        refused.incrementAndGet();
        log.warn(
                "quota limits of leader epoch {} refused, a newer leader provisions them: {}",
                term.value(),
                e.getMessage());
        boolean more;
        synchronized (lock) {
            if (epoch.equals(term)) {
                pendingLimits.clear();
                desired = null;
                desiredGeneration++;
                resetCheck = false;
                fenceDue = false;
            }
            more = !pendingLimits.isEmpty() || !pendingResets.isEmpty() || desired != null || fenceDue;
        }
        if (more) {
            requestDrain(0); // a later term of this node has work of its own
        }
    }

    private void retryLater(RuntimeException e) {
        if (!failing) {
            failing = true;
            log.warn("quota provisioning failed, retrying every {} ms: {}", retryMillis, e.getMessage());
        } else {
            log.debug("quota provisioning failed again: {}", e.getMessage());
        }
        requestDrain(retryMillis);
    }

    @Override
    public void close() {
        if (worker != null) {
            worker.shutdownNow();
        }
    }
}
