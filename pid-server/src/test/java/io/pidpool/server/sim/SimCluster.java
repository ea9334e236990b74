package io.pidpool.server.sim;

import io.pidpool.client.internal.SimClient;
import io.pidpool.core.fake.InMemoryDatabase;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.core.sim.SimPlatform;
import io.pidpool.core.sim.SimScheduler;
import io.pidpool.core.sim.SimScheduler.Proc;
import io.pidpool.core.sim.SimZooKeeper;
import io.pidpool.server.leader.SimLeader;
import io.pidpool.server.testing.TestCluster;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One simulated schedule of the whole hand-out protocol: 2-3 servers running the real leader code,
 * SDK clients running the real tracker, a simulated ZooKeeper, an in-memory database (the core's
 * fakes), the platform, a fault schedule drawn from the seed, and the checkers.
 *
 * <p>Timeline: setup, faults from 1 s until {@link #faultEnd} (drawn), then a quiet period of T +
 * grace + {@link #BOUND_NANOS} + 1 s after which the liveness checker runs.
 */
public final class SimCluster {
    /** Defects of the hand-out protocol known to be open; the schedule avoids (or only reports) them. */
    public enum KnownDefect {
        /**
         * A holder paused for T or longer resumes after its PIDs were handed on, and its onRevoked
         * returns only then: by the platform's records two instances hold the PID, although the frozen
         * one cannot use it and its lease keeps heldPids() empty from the moment it wakes. The
         * exclusive-hold promise covers pauses shorter than T/3 (docs/design.md §2); pauses between
         * T/3 and T are generated, longer ones are not while this is listed.
         */
        PAUSE_BEYOND_SESSION
    }

    static final long MS = 1_000_000L;
    static final long S = 1_000_000_000L;
    /** Requested (and negotiated) session timeout T. */
    static final long T = 3 * S;
    /** The clients' callback deadline D (the SDK's default is 5 s; here below T to keep schedules short). */
    static final long CALLBACK_DEADLINE = 2 * S;
    /** The current revision of the schedule generator (see the constructor). */
    static final int GENERATOR = 2;

    /** Share of schedules with {@link #deposedLeaderPolls}. */
    static final double DEPOSED_POLL_CHANCE = 0.3;
    /** Liveness: after the faults stop every ACTIVE PID is held within T + grace + this. */
    static final long BOUND_NANOS = 10 * S;

    static final ZkLayout LAYOUT = new ZkLayout("sim");
    static final ModuleKey A = ModuleKey.parse("sim#alpha#x");
    static final ModuleKey B = ModuleKey.parse("sim#beta#x");

    final SimScheduler sched;
    final Set<KnownDefect> knownOpen;
    final SimZooKeeper zk;
    final SimPlatform platform;
    final InMemoryDatabase database;
    final List<SimLeader> leaders = new ArrayList<>();
    final Map<String, Proc> procs = new LinkedHashMap<>();
    final Map<String, SimClient> clients = new TreeMap<>();
    final Map<String, ModuleKey> clientModule = new HashMap<>();
    final List<String> failures = new ArrayList<>();
    final List<String> reported = new ArrayList<>();
    final List<BatchId> submitted = new ArrayList<>();
    final Map<BatchId, Integer> appliedCount = new HashMap<>();
    final List<BatchId> appliedOrder = new ArrayList<>();
    final Map<String, Set<String>> pidPaths = new HashMap<>();
    final Map<String, Long> slowUntil = new HashMap<>();
    final long faultEnd;
    /** The generator's revision (see the constructor). */
    final int generator;

    final long grace;
    /** The newest epoch whose leader has read the database (checker 5, database side). */
    private long loadedEpoch;

    long clockOffset;
    int clientSeq;
    int pidSeq = 100;
    long batchSeq = 1;
    long allHeldAt = -1;

    final Clock clock = new Clock() {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.parse("2030-01-01T00:00:00Z").plusNanos(sched.now() + clockOffset);
        }
    };

    public SimCluster(long seed, Set<KnownDefect> knownOpen) {
        this(seed, knownOpen, GENERATOR);
    }

    /**
     * @param generator the revision of the schedule generator: a schedule found by an older one
     *     replays with it, so that it stays the schedule that found its defect. 1: before the
     *     deposed-leader composite; 2: {@link #deposedLeaderPolls}, and the platform recovers when the
     *     faults stop ({@link #behaviour})
     */
    public SimCluster(long seed, Set<KnownDefect> knownOpen, int generator) {
        this.generator = generator;
        this.sched = new SimScheduler(seed);
        this.knownOpen = knownOpen.isEmpty() ? EnumSet.noneOf(KnownDefect.class) : EnumSet.copyOf(knownOpen);
        this.zk = new SimZooKeeper(sched, 50 * MS);
        this.platform = new SimPlatform(sched);
        this.database = new InMemoryDatabase(clock);
        this.faultEnd = sched.between(10 * S, 20 * S);
        this.grace =
                SimLeader.settings().graceFor(java.time.Duration.ofNanos(T)).toNanos();
        zk.onCommit(this::committed);
    }

    public SimScheduler scheduler() {
        return sched;
    }

    public long endTime() {
        return faultEnd + T + grace + CALLBACK_DEADLINE + BOUND_NANOS + S;
    }

    // ---------------------------------------------------------------- setup

    public SimCluster run() {
        var repos = database.repositories();
        repos.modules().put(ModuleConfig.of(A, 3));
        repos.modules().put(ModuleConfig.of(B, 1));
        List<PidRecord> accounts = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            accounts.add(account("a" + i, A));
        }
        for (int i = 0; i < 4; i++) {
            accounts.add(account("b" + i, B));
        }
        repos.pids().insertAll(accounts);
        zk.ensure(LAYOUT.modules());
        zk.ensure(LAYOUT.leader());
        int servers = (int) sched.between(2, 3);
        for (int i = 1; i <= servers; i++) {
            Proc p = new Proc("s" + i);
            procs.put(p.name(), p);
            SimLeader leader = new SimLeader(sched, zk, p, LAYOUT, SimLeader.settings(), repos, clock, T, observer());
            leaders.add(leader);
            sched.after(sched.between(0, 300 * MS), p, p.name() + " start", () -> startLeader(leader));
        }
        for (int i = 0; i < 3; i++) {
            addClient(A, sched.between(0, 500 * MS));
        }
        addClient(B, sched.between(0, 500 * MS));
        if (sched.chance(0.5)) {
            addClient(B, sched.between(0, 500 * MS));
        }
        int faults = (int) sched.between(3, 12);
        for (int i = 0; i < faults; i++) {
            long at = sched.between(1 * S, faultEnd);
            sched.at(at, null, "fault", this::fault);
        }
        // drawn apart from the main generator, so that adding it left every other schedule as it was
        SplittableRandom extra = new SplittableRandom(sched.seed() ^ 0x5DEECE66DL);
        if (generator >= 2 && extra.nextDouble() < DEPOSED_POLL_CHANCE) {
            long latest = Math.max(1 * S, faultEnd - 3 * T);
            sched.at(1 * S + extra.nextLong(latest - 1 * S + 1), null, "fault", this::deposedLeaderPolls);
        }
        for (long t = faultEnd; t <= endTime(); t += 250 * MS) {
            sched.at(t, null, "liveness sample", this::sampleLiveness);
        }
        sched.at(faultEnd, null, "faults stop", this::faultsStop);
        sched.runUntil(endTime());
        finalChecks();
        return this;
    }

    static PidRecord account(String id, ModuleKey module) {
        return new PidRecord(id, module, 10_000, 0, PidAvailability.ACTIVE, TestCluster.secret(id), Map.of());
    }

    private void startLeader(SimLeader leader) {
        leader.start();
        SimZooKeeper.Client c = leader.zk();
        c.keepsReplies = false;
    }

    private void addClient(ModuleKey module, long delay) {
        String name = "c" + (++clientSeq);
        Proc p = new Proc(name);
        procs.put(name, p);
        clientModule.put(name, module);
        sched.after(delay, p, name + " start", () -> startClient(name));
    }

    private void startClient(String name) {
        Proc p = procs.get(name);
        SimClient client = new SimClient(
                sched,
                zk,
                p,
                name + "@" + sched.now() / MS,
                LAYOUT,
                clientModule.get(name),
                T,
                platform,
                behaviour(name),
                CALLBACK_DEADLINE);
        clients.put(name, client);
        client.start();
    }

    /** The listener's timing: quick logins, or slow and blocked ones while a slow-callback fault lasts. */
    private SimClient.Behaviour behaviour(String name) {
        return new SimClient.Behaviour() {
            @Override
            public long loginNanos(String pid) {
                Long until = slowUntil.get(name);
                if (until != null && sched.now() < until) {
                    return sched.chance(0.5) ? sched.between(grace / 2, 2 * (T + grace)) : sched.between(2 * T, 6 * T);
                }
                return sched.between(1 * MS, 50 * MS);
            }

            @Override
            public boolean loginFails(String pid) {
                // refused logins also hit re-take-ups after a suspension (a failed re-take-up of an
                // ADDED node once stranded its PID)
                return faulting() && sched.chance(0.02); // a refusal is a fault: none in the quiet period
            }

            @Override
            public long logoutNanos(String pid) {
                return sched.between(1 * MS, 100 * MS);
            }

            @Override
            public long startedNanos(long drawn) {
                if (generator < 2) {
                    return drawn;
                }
                // the platform recovers when the faults stop: a slow login still running returns then,
                // one that starts later (it waited in the lane) is quick. Otherwise a login drawn at
                // 6T just before the end, that ignores its interrupt, would keep a lane thread (and
                // the calls behind it) busy past the liveness bound.
                return Math.min(drawn, Math.max(0, faultEnd - sched.now()) + 50 * MS);
            }
        };
    }

    // ---------------------------------------------------------------- faults

    private boolean faulting() {
        return sched.now() < faultEnd;
    }

    private void fault() {
        if (!faulting()) {
            return;
        }
        int kind = (int) sched.between(0, 14);
        switch (kind) {
            case 0, 1 -> partition(randomParty(), sched.between(100 * MS, 2 * T));
            case 2 -> lostReplies(randomParty(), sched.between(200 * MS, 3 * S), 0.3);
            case 3 -> pause(randomProc(), pauseLength());
            case 4 -> slowCallbacks(randomClient());
            case 5 -> crashLeader();
            case 6 -> crashClient(randomClient());
            case 7 -> expire(randomParty());
            case 8 -> {
                clockOffset += sched.chance(0.5) ? sched.between(60 * S, 3600 * S) : -sched.between(60 * S, 3600 * S);
                sched.note("wall clock jumps to offset " + clockOffset / S + " s");
            }
            case 9, 10 -> batch();
            case 11 -> scale();
            case 12 -> addUnderLossyLeader();
            case 13 -> addUnderSlowLossyLeaderWhileJoining();
            default -> starveRevocations();
        }
    }

    private String randomParty() {
        List<String> names = new ArrayList<>();
        for (SimLeader l : leaders) {
            names.add(l.nodeId());
        }
        names.addAll(clients.keySet());
        return names.get((int) sched.between(0, names.size() - 1));
    }

    private Proc randomProc() {
        return procs.get(randomParty());
    }

    private String randomClient() {
        List<String> names = new ArrayList<>(clients.keySet());
        return names.get((int) sched.between(0, names.size() - 1));
    }

    private SimZooKeeper.Client zkOf(String party) {
        for (SimLeader l : leaders) {
            if (l.nodeId().equals(party)) {
                return l.zk();
            }
        }
        SimClient c = clients.get(party);
        return c == null ? null : c.zk();
    }

    private boolean isLeaderNode(String party) {
        return party.startsWith("s");
    }

    private long pauseLength() {
        int longest = knownOpen.contains(KnownDefect.PAUSE_BEYOND_SESSION) ? 2 : 4;
        return switch ((int) sched.between(0, longest)) {
            case 0 -> sched.between(50 * MS, T / 3 - 50 * MS);
            case 1 -> sched.between(T / 3 + 10 * MS, T / 2);
            case 2 -> sched.between(T / 2, T - 100 * MS);
            case 3 -> sched.between(T, 2 * T);
            default -> sched.between(2 * T, 3 * T);
        };
    }

    void partition(String party, long length) {
        SimZooKeeper.Client c = zkOf(party);
        if (c == null) {
            return;
        }
        int way = (int) sched.between(0, 2);
        boolean toServer = way != 2;
        boolean toClient = way != 1;
        sched.note(
                "partition " + party + (toServer && toClient ? " both ways" : toServer ? " client->zk" : " zk->client")
                        + " for " + length / MS + " ms");
        c.cutToServer |= toServer;
        c.cutToClient |= toClient;
        sched.after(length, null, "heal " + party, () -> {
            c.cutToServer = false;
            c.cutToClient = false;
            sched.trace("sim", "healed " + party);
        });
    }

    void lostReplies(String party, long length, double p) {
        SimZooKeeper.Client c = zkOf(party);
        if (c == null) {
            return;
        }
        sched.note("replies to " + party + " may be lost (" + p + ") for " + length / MS + " ms");
        c.loseReplies = p;
        sched.after(length, null, "replies to " + party + " reliable", () -> c.loseReplies = 0);
    }

    void pause(Proc p, long length) {
        if (p == null || !p.alive()) {
            return;
        }
        sched.note("pause " + p.name() + " for " + length / MS + " ms");
        sched.pause(p, sched.now() + length);
    }

    void slowCallbacks(String client) {
        long length = sched.between(1 * S, 4 * S);
        sched.note("logins of " + client + " slow or blocked for " + length / MS + " ms");
        slowUntil.put(client, sched.now() + length);
    }

    void crashLeader() {
        SimLeader target =
                leaders.stream().filter(SimLeader::serving).findFirst().orElse(leaders.get(0));
        Proc p = procs.get(target.nodeId());
        if (!p.alive()) {
            return;
        }
        long down = sched.between(500 * MS, 5 * S);
        sched.note("crash " + target.nodeId() + (target.serving() ? " (the leader)" : "") + ", back in " + down / MS
                + " ms");
        target.crash();
        sched.kill(p);
        sched.after(down, null, "restart " + target.nodeId(), () -> {
            sched.revive(p);
            sched.after(0, p, target.nodeId() + " start", () -> startLeader(target));
        });
    }

    void crashClient(String name) {
        SimClient c = clients.get(name);
        Proc p = procs.get(name);
        if (c == null || !p.alive() || c.closed()) {
            return;
        }
        long down = sched.between(200 * MS, 4 * S);
        sched.note("crash " + name + ", back in " + down / MS + " ms");
        c.crash();
        sched.kill(p);
        sched.after(down, null, "restart " + name, () -> {
            sched.revive(p);
            sched.after(0, p, name + " start", () -> startClient(name));
        });
    }

    void expire(String party) {
        SimZooKeeper.Client c = zkOf(party);
        if (c == null || c.lastSessionId() == 0) {
            return;
        }
        sched.note("server expires the session of " + party);
        zk.expire(c.lastSessionId());
    }

    void scale() {
        if (sched.chance(0.5) || clients.size() <= 2) {
            ModuleKey m = sched.chance(0.7) ? A : B;
            sched.note("scale out: a new client in " + m);
            addClient(m, 0);
        } else {
            String name = randomClient();
            SimClient c = clients.get(name);
            if (c == null || c.closed() || !procs.get(name).alive()) {
                return;
            }
            sched.note("scale in: " + name + " closes");
            c.close(5 * S);
        }
    }

    /** An ADD while the leader's replies may be lost: the unknown-outcome path of the leader. */
    /**
     * A deposed leader's batch: the leader stops for 2T..3T (its session expires, a successor is elected
     * and reads the database), a batch arrives shortly before it wakes, and the poll that fired during
     * the pause runs first when it does, before its ZooKeeper client notices anything (threads race on
     * waking; a poll may also have been inside its transaction). Only the database fence rejects it.
     */
    void deposedLeaderPolls() {
        SimLeader leader =
                leaders.stream().filter(SimLeader::serving).findFirst().orElse(null);
        if (leader == null || !faulting()) {
            return;
        }
        Proc p = procs.get(leader.nodeId());
        long length = sched.between(2 * T, 3 * T);
        sched.note("pause the leader " + leader.nodeId() + " for " + length / MS
                + " ms; its batch poll runs first when it wakes");
        sched.pause(p, sched.now() + length);
        sched.after(0, p, leader.nodeId() + " batch poll (due during the pause)", leader::pollBatchesNow);
        sched.after(
                length - sched.between(1 * MS, 300 * MS),
                null,
                "batch for the deposed leader",
                () -> submit(List.of(new Operation.Add<>(A, specs(2)))));
    }

    void addUnderLossyLeader() {
        SimLeader leader =
                leaders.stream().filter(SimLeader::serving).findFirst().orElse(null);
        if (leader == null) {
            return;
        }
        lostReplies(leader.nodeId(), sched.between(300 * MS, 1500 * MS), 0.5);
        submit(List.of(new Operation.Add<>(A, specs(3))));
    }

    /**
     * New PIDs while the leader's link is slow and loses replies, and an instance joins the module: a
     * write whose reply was lost may have landed, the re-read that would show it takes seconds over
     * the slow link, and the placement has a new place for the PID meanwhile.
     */
    void addUnderSlowLossyLeaderWhileJoining() {
        SimLeader leader =
                leaders.stream().filter(SimLeader::serving).findFirst().orElse(null);
        if (leader == null) {
            return;
        }
        SimZooKeeper.Client c = leader.zk();
        long length = sched.between(1 * S, 3 * S);
        sched.note("link of " + leader.nodeId() + " slow (100-400 ms) for " + length / MS + " ms");
        c.minDelay = 100 * MS;
        c.maxDelay = 400 * MS;
        sched.after(length, null, "link of " + leader.nodeId() + " fast", () -> {
            c.minDelay = 200_000;
            c.maxDelay = 2_000_000;
        });
        lostReplies(leader.nodeId(), length, 0.5);
        ModuleKey module = sched.chance(0.5) ? A : B;
        submit(List.of(new Operation.Add<>(module, specs(4))));
        addClient(module, sched.between(0, 300 * MS));
    }

    /** Blocked logins on one client, new PIDs for it, then its connection goes. */
    void starveRevocations() {
        String name = randomClient();
        slowCallbacks(name);
        submit(List.of(new Operation.Add<>(clientModule.get(name), specs(6))));
        long cut = sched.between(500 * MS, 2 * S);
        sched.after(cut, null, "cut " + name, () -> {
            if (faulting() && zkOf(name) != null) {
                partition(name, sched.between(T, 2 * T));
            }
        });
    }

    private List<PidSpec<SealedSecret>> specs(int n) {
        List<PidSpec<SealedSecret>> specs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String id = "n" + (pidSeq++);
            specs.add(new PidSpec<>(id, TestCluster.secret(id), 10_000, 0, Map.of()));
        }
        return specs;
    }

    void batch() {
        List<String> existing = new ArrayList<>();
        database.repositories().pids().loadAccounts().pids().forEach(p -> existing.add(p.id()));
        existing.sort(null);
        String some = existing.isEmpty() ? "a0" : existing.get((int) sched.between(0, existing.size() - 1));
        Operation<SealedSecret> op =
                switch ((int) sched.between(0, 5)) {
                    case 0 -> new Operation.Add<>(sched.chance(0.7) ? A : B, specs((int) sched.between(1, 4)));
                    case 1 ->
                        new Operation.Update<>(List.of(new PidSpec<>(
                                some, TestCluster.secret(some + "x" + sched.now()), 20_000, 5, Map.of())));
                    case 2 -> new Operation.Delete<>(List.of(some));
                    case 3 -> new Operation.Migrate<>(List.of(some), sched.chance(0.5) ? A : B);
                    case 4 -> new Operation.ResetQuota<>(List.of(some));
                    default -> new Operation.SetServers<>(sched.chance(0.5) ? A : B, (int) sched.between(1, 4), 0);
                };
        submit(List.of(op));
    }

    private void submit(List<Operation<SealedSecret>> ops) {
        BatchId id = new BatchId(batchSeq++);
        database.repositories().operations().append(BatchRecord.pending(id, ops, "operator", clock.instant()));
        submitted.add(id);
        sched.note("operator batch " + id + ": " + ops.get(0).type() + " "
                + ops.get(0).pidIds());
    }

    private void faultsStop() {
        sched.note("faults stop");
        for (String party : new ArrayList<>(procs.keySet())) {
            SimZooKeeper.Client c = zkOf(party);
            if (c != null) {
                c.cutToServer = false;
                c.cutToClient = false;
                c.loseReplies = 0;
            }
        }
        slowUntil.clear();
    }

    // ---------------------------------------------------------------- checkers

    private void fail(String checker, String message) {
        String line = SimScheduler.fmt(sched.now()) + " [" + checker + "] " + message;
        if (failures.size() < 20) {
            failures.add(line);
        }
        sched.note("VIOLATION " + checker + ": " + message);
    }

    private SimLeader.Observer observer() {
        return new SimLeader.Observer() {
            @Override
            public void batchApplied(BatchId id, Epoch epoch, BatchRecord record) {
                appliedCount.merge(id, 1, Integer::sum);
                appliedOrder.add(id);
                if (appliedCount.get(id) > 1) {
                    fail("3 batches", "batch " + id + " applied " + appliedCount.get(id) + " times");
                }
                databaseWrite("batch " + id, epoch);
            }

            @Override
            public void databaseWrite(String what, Epoch epoch) {
                if (epoch.value() < loadedEpoch) {
                    fail(
                            "5 fencing",
                            "a write of the leader of epoch " + epoch.value() + " landed in the database (" + what
                                    + ") after the leader of epoch " + loadedEpoch + " read it");
                }
            }

            @Override
            public void termLoaded(Epoch epoch) {
                loadedEpoch = Math.max(loadedEpoch, epoch.value());
            }
        };
    }

    long currentEpoch() {
        byte[] data = zk.data(LAYOUT.epoch());
        return data == null ? 0 : Long.parseLong(new String(data, StandardCharsets.US_ASCII).trim());
    }

    /** Checkers 2 and 5 (ZooKeeper side), on every transaction. */
    private void committed(long zxid, long session, List<SimZooKeeper.Op> ops) {
        boolean touchesTree = false;
        Set<String> pids = new TreeSet<>();
        for (SimZooKeeper.Op op : ops) {
            String path = op.path();
            if (path.startsWith("/modules/")) {
                touchesTree = true;
            }
            String pid = pidOf(path);
            if (pid == null) {
                continue;
            }
            pids.add(pid);
            if (op instanceof SimZooKeeper.Create) {
                pidPaths.computeIfAbsent(pid, k -> new TreeSet<>()).add(path);
            } else if (op instanceof SimZooKeeper.Delete) {
                Set<String> paths = pidPaths.get(pid);
                if (paths != null) {
                    paths.remove(path);
                }
            }
        }
        if (touchesTree && session != 0 && isLeaderSession(session)) {
            SimZooKeeper.Op first = ops.get(0);
            // the check must pin a version: check(/epoch, -1) passes for any epoch, a deposed leader's too
            if (!(first instanceof SimZooKeeper.Check check)
                    || !check.path().equals(LAYOUT.epoch())
                    || check.version() == -1) {
                fail("5 fencing", "an unfenced leader write landed in the tree: " + ops);
            }
        }
        for (String pid : pids) {
            List<String> live = new ArrayList<>();
            for (String path : pidPaths.getOrDefault(pid, Set.of())) {
                byte[] data = zk.data(path);
                if (data == null) {
                    continue;
                }
                try {
                    if (PidNode.decode(data).state() != PidState.DELETED) {
                        live.add(path);
                    }
                } catch (RuntimeException e) {
                    live.add(path); // unreadable: may be held
                }
            }
            if (live.size() > 1) {
                fail("2 one live node", "PID " + pid + " has " + live.size() + " live nodes: " + live);
            }
        }
    }

    private boolean isLeaderSession(long session) {
        for (SimLeader l : leaders) {
            if (l.zk() != null && l.zk().lastSessionId() == session) {
                return true;
            }
        }
        return false;
    }

    /** {@code /modules/<module>/<instance>-pids/<pid>} → pid. */
    static String pidOf(String path) {
        if (!path.startsWith("/modules/")) {
            return null;
        }
        String[] parts = path.split("/");
        if (parts.length != 5 || !parts[3].endsWith(InstanceId.PIDS_SUFFIX)) {
            return null;
        }
        return parts[4];
    }

    /** The ACTIVE PIDs of modules that have a live client, and whether each is held by exactly one. */
    private List<String> unheld() {
        Set<ModuleKey> served = new TreeSet<>();
        clients.forEach((name, c) -> {
            if (!c.closed() && procs.get(name).alive()) {
                served.add(clientModule.get(name));
            }
        });
        // the mass-failure brake holds a module's PIDs back on purpose (maintenance mode)
        for (SimLeader l : leaders) {
            if (l.serving()) {
                served.removeIf(m -> l.alertKeys().contains("signal:brake:" + m));
            }
        }
        List<String> missing = new ArrayList<>();
        for (PidRecord p : database.repositories().pids().loadAccounts().pids()) {
            if (p.status() == PidAvailability.ACTIVE && served.contains(p.module())) {
                int holders = platform.holders(p.id()).size();
                if (holders != 1) {
                    missing.add(p.id() + "(" + holders + ")");
                }
            }
        }
        return missing;
    }

    private void sampleLiveness() {
        if (allHeldAt < 0 && unheld().isEmpty()) {
            allHeldAt = sched.now();
        } else if (allHeldAt >= 0 && !unheld().isEmpty()) {
            allHeldAt = -1;
        }
    }

    private void finalChecks() {
        for (String v : platform.violations()) {
            if (failures.size() < 20) {
                failures.add("[1 exclusive hold] " + v);
            }
        }
        List<String> serving = leaders.stream()
                .filter(SimLeader::serving)
                .map(SimLeader::nodeId)
                .toList();
        if (serving.size() != 1) {
            fail("4 liveness", "after the faults stopped " + serving.size() + " leaders serve: " + serving);
        }
        List<String> missing = unheld();
        long deadline = faultEnd + T + grace + CALLBACK_DEADLINE + BOUND_NANOS;
        if (!missing.isEmpty()) {
            fail(
                    "4 liveness",
                    "not held by exactly one instance " + (endTime() - faultEnd) / MS + " ms after the faults stopped: "
                            + missing);
        } else if (allHeldAt > deadline) {
            fail(
                    "4 liveness",
                    "every PID held only at " + SimScheduler.fmt(allHeldAt) + ", later than T + grace + "
                            + BOUND_NANOS / S + " s after the faults stopped");
        }
        List<BatchId> sorted = new ArrayList<>(appliedOrder);
        sorted.sort(null);
        if (!sorted.equals(appliedOrder)) {
            fail("3 batches", "batches applied out of order: " + appliedOrder);
        }
        for (BatchId id : submitted) {
            BatchRecord record = database.repositories().operations().find(id).orElse(null);
            if (record == null || (record.status() != BatchStatus.DEALED && record.status() != BatchStatus.FAILED)) {
                fail("3 batches", "batch " + id + " not applied: " + (record == null ? "missing" : record.status()));
            } else if (record.results().size() != record.operations().size()) {
                fail(
                        "3 batches",
                        "batch " + id + " has " + record.results().size() + " results for "
                                + record.operations().size() + " operations");
            } else if (appliedCount.getOrDefault(id, 0) != 1) {
                fail("3 batches", "batch " + id + " applied " + appliedCount.getOrDefault(id, 0) + " times");
            }
        }
    }

    public List<String> failures() {
        return failures;
    }

    public List<String> reported() {
        return reported;
    }
}
