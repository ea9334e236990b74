package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.PidAccount;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Seeded random interleavings of leader writes, ZooKeeper deliveries, callback completions, write
 * results and suspend/resume, checking the listener contract and the protocol's safety rules after
 * every step, and liveness once the leader stops. A failing seed is printed and replays exactly.
 */
class PidTrackerSimulationTest {
    private static final long S = 77;
    private static final String ROOT = "/m/box-4d-pids";
    private static final int SEEDS = 300;
    private static final int STEPS = 300;

    /** One ZooKeeper node in the fake store. */
    private record Stored(PidNode node, int version, long mzxid) {}

    private record Callback(String pid, Action action) {}

    private static final class World {
        final Random random;
        final PidTracker tracker = new PidTracker();
        final Map<String, Stored> store = new HashMap<>();
        final Deque<NodeView> deliveries = new ArrayDeque<>(); // ZooKeeper -> cache -> state thread, in order
        final List<Callback> callbacks = new ArrayList<>(); // running on the callback executor
        final List<Action.Write> writes = new ArrayList<>(); // in flight to ZooKeeper
        final Set<String> listenerHeld = new TreeSet<>(); // onAssigned returned, onRevoked not returned
        final Set<String> revoking = new HashSet<>(); // onRevoked dispatched, not returned
        long zxid = 1;
        long epoch = 1;
        boolean granting = true;
        boolean reliable;

        World(long seed) {
            this.random = new Random(seed);
            tracker.resetSession(S);
            tracker.resume();
        }

        AccountPayload payload() {
            return new AccountPayload(
                    random.nextInt(3) * 100, 0, new SealedSecret("k", "pw".getBytes(StandardCharsets.UTF_8)), Map.of());
        }

        void leaderWrites(PidNode node) {
            Stored old = store.get(node.pidId());
            Stored next = new Stored(node, old == null ? 0 : old.version() + 1, ++zxid);
            store.put(node.pidId(), next);
            deliveries.add(
                    NodeView.of(tracker.generation(), ROOT + "/" + node.pidId(), node, next.version(), next.mzxid()));
        }

        void leaderStep() {
            String pid = "p" + random.nextInt(6);
            Stored s = store.get(pid);
            int choice = random.nextInt(10);
            if (s == null) {
                leaderWrites(PidNode.instruction(pid, PidState.ADDING, new Epoch(epoch), S, payload()));
            } else if (s.node().state() == PidState.DELETED
                    || (s.node().state() == PidState.ADDING && s.node().hasError())) {
                store.remove(pid); // the leader removes answered nodes
                deliveries.add(deleted(pid));
            } else if (choice < 3
                    && (s.node().state() == PidState.ADDED || s.node().state() == PidState.UPDATED)) {
                leaderWrites(PidNode.instruction(pid, PidState.UPDATING, new Epoch(epoch), S, payload()));
            } else if (choice < 6) {
                leaderWrites(PidNode.instruction(
                        pid, PidState.DELETING, new Epoch(epoch), S, s.node().account()));
            } else if (choice == 6) {
                // failover: the new leader re-stamps every instruction that is still unanswered
                epoch++;
                for (Stored pending : List.copyOf(store.values())) {
                    PidNode n = pending.node();
                    if (n.state().isInstruction() && !n.hasError()) {
                        leaderWrites(PidNode.instruction(n.pidId(), n.state(), new Epoch(epoch), S, n.account()));
                    }
                }
            }
        }

        NodeView deleted(String pid) {
            return new NodeView(tracker.generation(), ROOT + "/" + pid, pid, -1, -1, null, "deleted");
        }

        void apply(List<Action> actions) {
            for (Action a : actions) {
                boolean busy = callbacks.stream().anyMatch(c -> c.pid().equals(a.pid()));
                if (a instanceof Action.Assign x) {
                    assertThat(busy).as("callbacks overlap for %s", x.pid()).isFalse();
                    assertThat(listenerHeld)
                            .as("onAssigned(%s) while held", x.pid())
                            .doesNotContain(x.pid());
                    assertThat(granting)
                            .as("onAssigned(%s) while not granting", x.pid())
                            .isTrue();
                    callbacks.add(new Callback(x.pid(), a));
                } else if (a instanceof Action.Update x) {
                    assertThat(busy).as("callbacks overlap for %s", x.pid()).isFalse();
                    assertThat(listenerHeld).contains(x.pid());
                    callbacks.add(new Callback(x.pid(), a));
                } else if (a instanceof Action.Revoke x) {
                    assertThat(busy).as("callbacks overlap for %s", x.pid()).isFalse();
                    assertThat(listenerHeld)
                            .as("onRevoked(%s) while not held", x.pid())
                            .contains(x.pid());
                    revoking.add(x.pid());
                    callbacks.add(new Callback(x.pid(), a));
                } else if (a instanceof Action.Write x) {
                    PidState state = x.node().state();
                    if (state == PidState.ADDED || state == PidState.UPDATED) {
                        if (!x.node().hasError()) {
                            assertThat(listenerHeld)
                                    .as("%s acked %s before holding it", x.pid(), state)
                                    .contains(x.pid());
                        }
                    } else if (state == PidState.DELETED) {
                        assertThat(listenerHeld)
                                .as("%s acked DELETED while held", x.pid())
                                .doesNotContain(x.pid());
                        assertThat(busy)
                                .as("%s acked DELETED while a callback runs", x.pid())
                                .isFalse();
                    }
                    writes.add(x);
                }
            }
            Set<String> expected = new TreeSet<>(listenerHeld);
            expected.removeAll(revoking);
            assertThat(tracker.heldIds()).isEqualTo(expected);
        }

        void deliver() {
            NodeView v = deliveries.poll();
            if (v.malformed() != null && v.malformed().equals("deleted")) {
                apply(tracker.onNodeDeleted(v.generation(), v.name()));
            } else {
                apply(tracker.onNode(v));
            }
        }

        /**
         * Right after granting stops, every PID the listener holds is being revoked, or its onUpdated
         * runs (revoked when it returns): no acknowledgement in flight delays the logout (docs/design.md §6).
         */
        void assertHoldEndsNow() {
            for (String pid : listenerHeld) {
                boolean callbackRunning =
                        callbacks.stream().anyMatch(c -> c.pid().equals(pid));
                assertThat(revoking.contains(pid) || callbackRunning)
                        .as("%s still held after suspend()", pid)
                        .isTrue();
            }
        }

        void completeCallback() {
            Callback c = callbacks.remove(random.nextInt(callbacks.size()));
            Outcome outcome;
            if (c.action() instanceof Action.Assign x) {
                if (random.nextInt(5) == 0) {
                    outcome = new Outcome.Failed("refused");
                } else {
                    listenerHeld.add(x.pid());
                    outcome = new Outcome.Assigned(new PidAccount(x.pid(), "pw", 1, 0, Map.of()));
                }
            } else if (c.action() instanceof Action.Update x) {
                outcome = random.nextInt(5) == 0
                        ? new Outcome.Failed("update refused")
                        : new Outcome.Updated(new PidAccount(x.pid(), "pw", 2, 0, Map.of()));
            } else {
                listenerHeld.remove(c.pid());
                revoking.remove(c.pid());
                outcome = new Outcome.Revoked();
            }
            apply(tracker.onCallbackDone(c.pid(), outcome));
        }

        void completeWrite() {
            Action.Write w = writes.remove(random.nextInt(writes.size()));
            Stored s = store.get(w.pid());
            if (s == null) {
                apply(tracker.onWriteDone(w, PidTracker.WriteResult.NO_NODE, null));
            } else if (!reliable && random.nextInt(10) == 0) {
                apply(tracker.onWriteDone(w, PidTracker.WriteResult.FAILED, null)); // e.g. connection loss
            } else if (s.version() != w.expectedVersion()) {
                apply(tracker.onWriteDone(w, PidTracker.WriteResult.BAD_VERSION, null));
                // the driver re-reads the node
                deliveries.add(NodeView.of(tracker.generation(), w.path(), s.node(), s.version(), s.mzxid()));
            } else {
                Stored next = new Stored(w.node(), s.version() + 1, ++zxid);
                store.put(w.pid(), next);
                NodeView view = NodeView.of(tracker.generation(), w.path(), w.node(), next.version(), next.mzxid());
                deliveries.add(view); // the cache sees our own write too
                apply(tracker.onWriteDone(w, PidTracker.WriteResult.OK, view));
            }
        }

        void step() {
            int choice = random.nextInt(100);
            if (choice < 25) {
                leaderStep();
            } else if (choice < 50 && !deliveries.isEmpty()) {
                deliver();
            } else if (choice < 70 && !callbacks.isEmpty()) {
                completeCallback();
            } else if (choice < 90 && !writes.isEmpty()) {
                completeWrite();
            } else if (choice < 95 && granting) {
                granting = false;
                apply(tracker.suspend());
                assertHoldEndsNow();
            } else if (choice < 100 && !granting) {
                granting = true;
                apply(tracker.resume());
            }
        }

        /** Leader quiet, connection fine: run everything to completion. */
        void drain() {
            reliable = true;
            if (!granting) {
                granting = true;
                apply(tracker.resume());
            }
            for (int i = 0; i < 10_000 && !(deliveries.isEmpty() && callbacks.isEmpty() && writes.isEmpty()); i++) {
                if (!deliveries.isEmpty()) {
                    deliver();
                } else if (!callbacks.isEmpty()) {
                    completeCallback();
                } else {
                    completeWriteReliably();
                }
            }
            // failed writes are retried on resume (as after a reconnect)
            apply(tracker.suspend());
            while (!callbacks.isEmpty()) {
                completeCallback();
            }
            apply(tracker.resume());
            for (int i = 0; i < 10_000 && !(deliveries.isEmpty() && callbacks.isEmpty() && writes.isEmpty()); i++) {
                if (!deliveries.isEmpty()) {
                    deliver();
                } else if (!callbacks.isEmpty()) {
                    completeCallback();
                } else {
                    completeWriteReliably();
                }
            }
        }

        void completeWriteReliably() {
            Action.Write w = writes.get(0);
            Stored s = store.get(w.pid());
            if (s != null && s.version() == w.expectedVersion()) {
                writes.remove(0);
                Stored next = new Stored(w.node(), s.version() + 1, ++zxid);
                store.put(w.pid(), next);
                NodeView view = NodeView.of(tracker.generation(), w.path(), w.node(), next.version(), next.mzxid());
                deliveries.add(view);
                apply(tracker.onWriteDone(w, PidTracker.WriteResult.OK, view));
            } else {
                completeWrite();
            }
        }
    }

    @Test
    void randomInterleavingsKeepTheContractAndSettle() {
        for (long seed = 1; seed <= SEEDS; seed++) {
            World world = new World(seed);
            try {
                for (int i = 0; i < STEPS; i++) {
                    world.step();
                }
                world.drain();
                // liveness: every instruction answered; held = exactly the nodes that say so
                Set<String> shouldHold = new TreeSet<>();
                for (Map.Entry<String, Stored> e : world.store.entrySet()) {
                    PidNode node = e.getValue().node();
                    if (!node.hasError()) {
                        assertThat(node.state().isInstruction())
                                .as("%s left unanswered in %s", e.getKey(), node.state())
                                .isFalse();
                    }
                    if ((node.state() == PidState.ADDED || node.state() == PidState.UPDATED) && !node.hasError()) {
                        shouldHold.add(e.getKey());
                    }
                }
                assertThat(world.tracker.heldIds()).isEqualTo(shouldHold);
                assertThat(world.listenerHeld).isEqualTo(shouldHold);
                assertThat(world.tracker.isQuiescent()).isTrue();
            } catch (AssertionError e) {
                throw new AssertionError("seed " + seed + ": " + e.getMessage(), e);
            }
        }
    }
}
