package io.pidpool.core.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

class NodeFormatProperties {
    @Property(tries = 1000)
    void pidNodesRoundTrip(
            @ForAll @AlphaChars @StringLength(min = 1, max = 40) String pid,
            @ForAll PidState state,
            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long epoch,
            @ForAll long session,
            @ForAll @LongRange(min = 0, max = 1_000_000_000) long quota,
            @ForAll byte[] sealedTail,
            @ForAll @StringLength(max = 20) String error) {
        byte[] sealed = new byte[sealedTail.length + 1];
        System.arraycopy(sealedTail, 0, sealed, 1, sealedTail.length);
        var node = new PidNode(
                pid,
                state,
                new Epoch(epoch),
                session,
                new PidNode.AccountPayload(quota, 0, new SealedSecret("k1", sealed), Map.of("region", "eu")),
                error);
        PidNode back = PidNode.decode(node.encode());
        assertThat(back).isEqualTo(node);
    }

    @Property(tries = 500)
    void reportsRoundTripAndOnlyNodesWithAReportUseVersion2(
            @ForAll PidState state,
            @ForAll HealthReport.Kind kind,
            @ForAll @StringLength(max = 1200) String detail,
            @ForAll @StringLength(max = 20) String error) {
        var plain = new PidNode(
                "u1",
                state,
                new Epoch(5),
                77,
                new PidNode.AccountPayload(10, 2, new SealedSecret("k1", new byte[] {1}), Map.of()),
                error);
        assertThat(plain.encode()[1]).as("version").isEqualTo((byte) 1);
        var reported = plain.withReport(new HealthReport(kind, detail));
        byte[] bytes = reported.encode();
        assertThat(bytes[1]).as("version").isEqualTo((byte) 2);
        PidNode back = PidNode.decode(bytes);
        assertThat(back).isEqualTo(reported);
        assertThat(back.report().detail()).hasSizeLessThanOrEqualTo(HealthReport.MAX_DETAIL);
        if (state.isInstruction()) {
            assertThat(back.acknowledged().hasReport()).isFalse();
        }
        assertThat(back.failed("x").report()).isEqualTo(reported.report());
        // a version-2 node cut before its report is rejected, not read as version 1
        byte[] cut = java.util.Arrays.copyOf(bytes, plain.encode().length);
        assertThatThrownBy(() -> PidNode.decode(cut)).isInstanceOf(PidPoolException.class);
    }

    /**
     * {@link PidNode#encode()} writes the exact bytes of the format as the stream-based encoder wrote
     * them (kept here as the reference): what older SDKs and leaders read must not change.
     */
    @Property(tries = 1000)
    void pidNodesEncodeToTheBytesOfTheStreamFormat(
            @ForAll @AlphaChars @StringLength(min = 1, max = 40) String pid,
            @ForAll PidState state,
            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long epoch,
            @ForAll long session,
            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long quota,
            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long allowance,
            @ForAll @AlphaChars @StringLength(min = 1, max = 10) String keyId,
            @ForAll byte[] sealedTail,
            @ForAll @Size(max = 5) Map<@StringLength(max = 8) String, @StringLength(max = 12) String> attributes,
            @ForAll @StringLength(max = 20) String error,
            @ForAll boolean withReport,
            @ForAll HealthReport.Kind kind,
            @ForAll @StringLength(max = 30) String detail) {
        var node = new PidNode(
                pid,
                state,
                new Epoch(epoch),
                session,
                new PidNode.AccountPayload(quota, allowance, new SealedSecret(keyId, sealed(sealedTail)), attributes),
                error,
                withReport ? new HealthReport(kind, detail) : null);
        assertThat(node.encode()).isEqualTo(streamEncoded(node));
        assertThat(PidNode.decode(node.encode())).isEqualTo(node);
    }

    private static byte[] sealed(byte[] tail) {
        byte[] sealed = new byte[tail.length + 1];
        System.arraycopy(tail, 0, sealed, 1, tail.length);
        return sealed;
    }

    private static byte[] streamEncoded(PidNode node) {
        var bytes = new java.io.ByteArrayOutputStream();
        try (var out = new java.io.DataOutputStream(bytes)) {
            out.writeByte('P');
            out.writeByte(node.report() == null ? 1 : 2);
            writeString(out, node.pidId());
            out.writeByte(node.state().ordinal());
            out.writeLong(node.epoch().value());
            out.writeLong(node.ownerSessionId());
            out.writeLong(node.account().monthlyQuota());
            out.writeLong(node.account().overageAllowance());
            writeString(out, node.account().secret().keyId());
            byte[] sealed = node.account().secret().sealed();
            out.writeInt(sealed.length);
            out.write(sealed);
            out.writeInt(node.account().attributes().size());
            for (var e : new java.util.TreeMap<>(node.account().attributes()).entrySet()) {
                writeString(out, e.getKey());
                writeString(out, e.getValue());
            }
            writeString(out, node.error());
            if (node.report() != null) {
                out.writeByte(node.report().kind().ordinal());
                writeString(out, node.report().detail());
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static void writeString(java.io.DataOutputStream out, String value) throws java.io.IOException {
        byte[] utf8 = value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.writeInt(utf8.length);
        out.write(utf8);
    }

    @Test
    void anUnknownReportKindIsRejected() {
        var node = new PidNode(
                        "u1",
                        PidState.ADDED,
                        new Epoch(1),
                        1,
                        new PidNode.AccountPayload(10, 0, new SealedSecret("k1", new byte[] {1}), Map.of()),
                        "")
                .withReport(HealthReport.loginConflict("second terminal"));
        byte[] bytes = node.encode();
        int plainLength = node.withReport(null).encode().length;
        bytes[plainLength] = 9; // the kind byte follows the version-1 fields
        assertThatThrownBy(() -> PidNode.decode(bytes))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("report kind");
    }

    @Property(tries = 1000)
    void garbageIsAClearErrorNeverACrash(@ForAll byte[] garbage) {
        for (var decoder : new java.util.function.Function<?, ?>[] {
            (byte[] b) -> PidNode.decode(b), (byte[] b) -> InstanceNode.decode(b)
        }) {
            @SuppressWarnings("unchecked")
            var f = (java.util.function.Function<byte[], Object>) decoder;
            try {
                f.apply(garbage);
            } catch (PidPoolException e) {
                assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            }
        }
    }

    @Property(tries = 1000)
    void everyTruncationOfAValidNodeIsRejected(@ForAll @IntRange(min = 0, max = 100) int cut) {
        byte[] full = PidNode.instruction(
                        "u1",
                        PidState.ADDING,
                        new Epoch(3),
                        42,
                        new PidNode.AccountPayload(10, 0, new SealedSecret("k1", new byte[] {1, 2}), Map.of()))
                .encode();
        if (cut >= full.length) {
            return;
        }
        byte[] truncated = java.util.Arrays.copyOf(full, cut);
        assertThatThrownBy(() -> PidNode.decode(truncated))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("pidNode");
    }

    @Test
    void instanceNodesCarryThePidsPath() {
        var node = InstanceNode.registering(2, "host-a");
        var assigned =
                InstanceNode.decode(node.withPidsPath("/modules/a#b#c/i1-pids").encode());
        assertThat(assigned.pidsPath()).isEqualTo("/modules/a#b#c/i1-pids");
        assertThat(assigned.weight()).isEqualTo(2);
        assertThat(InstanceNode.decode(node.encode()).hasPidsPath()).isFalse();
    }

    @Test
    void instanceNodesCarryTheCallbackDeadlineAndOldNodesStillDecode() {
        var node = InstanceNode.registering(2, "host-a", java.time.Duration.ofMillis(7_500));
        var decoded =
                InstanceNode.decode(node.withPidsPath("/modules/a#b#c/i1-pids").encode());
        assertThat(decoded.callbackDeadlineMillis()).isEqualTo(7_500);
        assertThat(decoded.reportsCallbackDeadline()).isTrue();
        assertThat(decoded.pidsPath()).isEqualTo("/modules/a#b#c/i1-pids");
        assertThat(node.encode()[1]).isEqualTo((byte) 2);

        // version 1, as written by an SDK that reports no deadline: 'I', 1, pidsPath, weight, host
        var bytes = new java.io.ByteArrayOutputStream();
        try (var out = new java.io.DataOutputStream(bytes)) {
            out.writeByte('I');
            out.writeByte(1);
            out.writeInt(0);
            out.writeInt(3);
            byte[] host = "old-host".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            out.writeInt(host.length);
            out.write(host);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        var old = InstanceNode.decode(bytes.toByteArray());
        assertThat(old.weight()).isEqualTo(3);
        assertThat(old.host()).isEqualTo("old-host");
        assertThat(old.reportsCallbackDeadline()).isFalse();
        // a node without a deadline is still written as version 1, readable by older SDKs and leaders
        assertThat(old.withPidsPath("/p").encode()[1]).isEqualTo((byte) 1);
        assertThatThrownBy(() -> InstanceNode.registering(1, "h", java.time.Duration.ofMillis(-1)))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("callbackDeadline");
    }

    @Test
    void aReturningClientsNodeNamesItsPreviousInstanceAndKeepsItThroughTheHandshake() {
        var first = InstanceNode.registering(2, "host-a", java.time.Duration.ofMillis(7_500));
        assertThat(first.hasPreviousInstance()).isFalse();
        assertThat(first.withPreviousInstance(null).encode()[1])
                .as("a first registration stays version 2")
                .isEqualTo((byte) 2);

        var again = first.withPreviousInstance("app-1a2b");
        assertThat(again.encode()[1]).isEqualTo((byte) 3);
        var decoded = InstanceNode.decode(again.encode());
        assertThat(decoded.previousInstance()).isEqualTo("app-1a2b");
        assertThat(decoded.callbackDeadlineMillis()).isEqualTo(7_500);
        var handshaken = InstanceNode.decode(
                decoded.withPidsPath("/modules/a#b#c/app-9f-pids").encode());
        assertThat(handshaken.previousInstance())
                .as("the leader's write keeps it")
                .isEqualTo("app-1a2b");
        assertThat(handshaken.pidsPath()).isEqualTo("/modules/a#b#c/app-9f-pids");

        assertThatThrownBy(() -> first.withPreviousInstance("x-pids"))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("instance");
    }

    @Test
    void notifySignalsRoundTripAndRejectJunk() {
        var signal = new NotifySignal(NotifySignal.Phase.DEALING, new io.pidpool.core.model.BatchId(77));
        assertThat(NotifySignal.decode(signal.encode())).isEqualTo(signal);
        assertThatThrownBy(() -> NotifySignal.decode("DONE|x".getBytes())).hasMessageContaining("notify data must be");
    }
}
