package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.NodeStat;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ZkViewTest {
    static final ModuleKey M = ModuleKey.parse("a#b#c");
    final ViewFixture fx = new ViewFixture();
    final InstanceKey one = fx.instance(M, "i-1", 11, true);

    PidState stateOf(String pid) {
        var nodes = fx.view.nodesOf(pid);
        assertThat(nodes).hasSizeLessThanOrEqualTo(1);
        return nodes.isEmpty() ? null : nodes.iterator().next().node().state();
    }

    @Test
    void anAcknowledgementIsNotAStructuralChangeButNewNodesRevokesAndRemovalsAre() {
        fx.view.trackChanges(true);
        long v0 = fx.view.structureVersion();
        String path = fx.pid(one, "p", PidState.ADDING, new Epoch(1), 11);
        long v1 = fx.view.structureVersion();
        assertThat(v1).isNotEqualTo(v0);
        assertThat(fx.view.drainDirtyPids()).containsExactly("p");
        assertThat(fx.view.drainDirtyPids()).isEmpty();

        fx.pid(one, "p", PidState.ADDED, new Epoch(1), 11); // the SDK's ack
        assertThat(fx.view.structureVersion()).isEqualTo(v1);
        assertThat(fx.view.drainDirtyPids()).containsExactly("p"); // its database row changes

        fx.pid(one, "p", PidState.DELETING, new Epoch(1), 11);
        long v2 = fx.view.structureVersion();
        assertThat(v2).isNotEqualTo(v1);
        fx.pid(one, "p", PidState.ADDED, new Epoch(1), 12); // another owner: to be repaired
        long v3 = fx.view.structureVersion();
        assertThat(v3).isNotEqualTo(v2);
        fx.delete(path);
        assertThat(fx.view.structureVersion()).isNotEqualTo(v3);
        assertThat(fx.view.drainDirtyPids()).containsExactly("p");
    }

    @Test
    void anInstanceChangeDirtiesItsPidsAndFollowersTrackNothing() {
        fx.pid(one, "p", PidState.ADDED, new Epoch(1), 11);
        fx.pid(one, "q", PidState.ADDED, new Epoch(1), 11);
        assertThat(fx.view.drainDirtyPids()).isEmpty(); // not tracking: a follower's view
        fx.view.trackChanges(true);
        long v0 = fx.view.structureVersion();
        fx.instance(M, "i-1", 13, true); // re-registered with another session
        assertThat(fx.view.structureVersion()).isNotEqualTo(v0);
        assertThat(fx.view.drainDirtyPids()).containsExactlyInAnyOrder("p", "q");
        fx.view.markDirty("r");
        fx.view.trackChanges(false);
        assertThat(fx.view.drainDirtyPids()).isEmpty();
    }

    @Test
    void anOlderObservationNeverOverwritesANewerOne() {
        String path = fx.pid(one, "p", PidState.ADDING, new Epoch(1), 11);
        NodeStat adding = fx.stat(path);
        byte[] addingData = fx.view.node(path).data();
        fx.pid(one, "p", PidState.ADDED, new Epoch(1), 11);
        // a late watcher event or a scan that read the node before the ack
        fx.view.replay(new NodeEvent.Upsert(path, addingData, adding));
        assertThat(stateOf("p")).isEqualTo(PidState.ADDED);
    }

    @Test
    void aDeletedIncarnationCannotComeBackButANewOneCan() {
        String path = fx.pid(one, "p", PidState.DELETED, new Epoch(1), 11);
        NodeStat old = fx.stat(path);
        byte[] oldData = fx.view.node(path).data();
        fx.delete(path);
        fx.view.replay(new NodeEvent.Upsert(path, oldData, old)); // stale
        assertThat(fx.view.nodesOf("p")).isEmpty();
        fx.pid(one, "p", PidState.ADDING, new Epoch(2), 11); // created again: higher czxid
        assertThat(stateOf("p")).isEqualTo(PidState.ADDING);
    }

    @Test
    void tombstonesAreForgottenOnlyWhenOld() {
        String path = fx.pid(one, "p", PidState.DELETED, new Epoch(1), 11);
        NodeStat old = fx.stat(path);
        byte[] oldData = fx.view.node(path).data();
        fx.delete(path);
        fx.ticker.advance(java.time.Duration.ofMinutes(5));
        fx.view.pruneTombstones(java.time.Duration.ofMinutes(10));
        fx.view.replay(new NodeEvent.Upsert(path, oldData, old));
        assertThat(fx.view.nodesOf("p")).isEmpty();
        fx.ticker.advance(java.time.Duration.ofMinutes(6));
        fx.view.pruneTombstones(java.time.Duration.ofMinutes(10));
        assertThat(fx.view.tombstones()).isZero();
    }

    @Test
    void aListingRemovesOnlyChildrenThatExistedWhenItWasRead() {
        String gone = fx.pid(one, "gone", PidState.ADDED, new Epoch(1), 11);
        String parent = ViewFixture.LAYOUT.pids(M, one.instance());
        long readAt = fx.nextZxid();
        String late = fx.pid(one, "late", PidState.ADDING, new Epoch(1), 11); // created after the read
        NodeStat parentStat =
                new NodeStat(fx.stat(parent).czxid(), fx.stat(parent).mzxid(), readAt, 0, 0, 0);
        fx.view.replay(new NodeEvent.Listing(parent, List.of(), parentStat));
        assertThat(fx.view.node(gone)).isNull();
        assertThat(fx.view.node(late)).isNotNull();
        assertThat(fx.view.pidNodes(one)).containsOnlyKeys("late");
    }

    @Test
    void theIndexByPidFollowsDataChangesAndDeletes() {
        String path = fx.pid(one, "p", PidState.ADDING, new Epoch(1), 11);
        fx.pid(one, "p", PidState.ADDED, new Epoch(1), 11);
        fx.pid(one, "p", PidState.DELETING, new Epoch(1), 11);
        assertThat(fx.view.nodesOf("p")).hasSize(1);
        fx.delete(path);
        assertThat(fx.view.nodesOf("p")).isEmpty();
        assertThat(fx.view.allPidNodes()).isEmpty();
    }

    @Test
    void malformedDataIsKeptWithItsProblemAndNeverThrows() {
        String path = fx.raw(ViewFixture.LAYOUT.pid(M, one.instance(), "p"), "junk".getBytes(StandardCharsets.UTF_8));
        ZkView.PidEntry entry = fx.view.nodesOf("p").iterator().next();
        assertThat(entry.malformed()).isTrue();
        assertThat(entry.problem()).contains("pidNode");
        // data naming another PID is malformed too
        PidNode other = PidNode.instruction("q", PidState.ADDING, new Epoch(1), 11, DbFixture.payload("q"));
        fx.raw(path, other.encode());
        assertThat(fx.view.nodesOf("p").iterator().next().problem()).contains("names PID q");
        // nodes PidPool never writes are ignored
        fx.raw("/modules/not-a-module", new byte[0]);
        fx.raw(ViewFixture.LAYOUT.module(M) + "/bad name", new byte[0]);
        assertThat(fx.view.instances(M)).containsOnlyKeys(one.instance());
    }

    @Test
    void instancesArePersistentOrEphemeralAndUnreadableOnesAreFlagged() {
        assertThat(fx.view.instances(M).get(one.instance()).node()).isNotNull();
        fx.raw(ViewFixture.LAYOUT.instance(M, io.pidpool.core.model.InstanceId.of("odd")), new byte[] {1, 2});
        ZkView.InstanceEntry odd = fx.view.instances(M).get(io.pidpool.core.model.InstanceId.of("odd"));
        assertThat(odd.node()).isNull();
        assertThat(odd.problem()).isEqualTo("not an ephemeral node");
    }
}
