package io.pidpool.server.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The epoch bump over a fake {@link EpochNode}: the same code the term start and the simulation run. */
class EpochBumpTest {
    /** One /epoch node in memory; {@code races} writes and creates lose a race first. */
    static final class FakeNode implements EpochNode {
        byte[] data;
        int version;
        int races;
        int reads;

        @Override
        public long sessionId() {
            return 42;
        }

        @Override
        public CompletionStage<Versioned> read(String path) {
            reads++;
            return CompletableFuture.completedFuture(data == null ? null : new Versioned(data, version));
        }

        @Override
        public CompletionStage<Integer> write(String path, byte[] next, int expectedVersion) {
            if (races > 0 || expectedVersion != version) {
                races--;
                version++; // somebody else wrote meanwhile
                return CompletableFuture.completedFuture(-1);
            }
            data = next;
            return CompletableFuture.completedFuture(++version);
        }

        @Override
        public CompletionStage<Boolean> create(String path, byte[] first) {
            if (races > 0) {
                races--;
                data = "7".getBytes(StandardCharsets.US_ASCII);
                return CompletableFuture.completedFuture(false);
            }
            data = first;
            version = 0;
            return CompletableFuture.completedFuture(true);
        }

        long epoch() {
            return Long.parseLong(new String(data, StandardCharsets.US_ASCII));
        }
    }

    static FenceToken bump(FakeNode node, Epoch floor) {
        try {
            return EpochFence.bump(node, "/epoch", floor).toCompletableFuture().join();
        } catch (CompletionException e) {
            throw (RuntimeException) e.getCause();
        }
    }

    @Test
    void anAbsentNodeIsCreatedAboveTheFloor() {
        FakeNode node = new FakeNode();
        FenceToken token = bump(node, new Epoch(4));
        assertThat(token.epoch()).isEqualTo(new Epoch(5));
        assertThat(token.epochVersion()).isZero();
        assertThat(token.sessionId()).isEqualTo(42);
        assertThat(node.epoch()).isEqualTo(5);
    }

    @Test
    void theNextEpochIsAboveBothTheNodeAndTheFloor() {
        FakeNode node = new FakeNode();
        node.data = "9".getBytes(StandardCharsets.US_ASCII);
        node.version = 3;
        assertThat(bump(node, new Epoch(2)).epoch()).isEqualTo(new Epoch(10));
        assertThat(bump(node, new Epoch(20)).epoch()).isEqualTo(new Epoch(21));
        assertThat(node.version).isEqualTo(5);
    }

    @Test
    void garbageCountsAsTheNodesVersion() {
        FakeNode node = new FakeNode();
        node.data = "junk".getBytes(StandardCharsets.US_ASCII);
        node.version = 6;
        FenceToken token = bump(node, Epoch.NONE);
        assertThat(token.epoch()).isEqualTo(new Epoch(7));
        assertThat(token.epochVersion()).isEqualTo(7);
    }

    @Test
    void aLostRaceReadsAgainAndGivesUpAfterFiveAttempts() {
        FakeNode node = new FakeNode();
        node.data = "1".getBytes(StandardCharsets.US_ASCII);
        node.races = 2;
        assertThat(bump(node, Epoch.NONE).epoch()).isEqualTo(new Epoch(2));
        assertThat(node.reads).isEqualTo(3);

        FakeNode busy = new FakeNode();
        busy.data = "1".getBytes(StandardCharsets.US_ASCII);
        busy.races = 100;
        assertThatThrownBy(() -> bump(busy, Epoch.NONE))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        assertThat(busy.reads).isEqualTo(5);
    }

    @Test
    void aNodeCreatedMeanwhileIsReadAndBumped() {
        FakeNode node = new FakeNode();
        node.races = 1; // the create finds the node another leader created with 7
        assertThat(bump(node, Epoch.NONE).epoch()).isEqualTo(new Epoch(8));
        assertThat(node.reads).isEqualTo(2);
    }
}
