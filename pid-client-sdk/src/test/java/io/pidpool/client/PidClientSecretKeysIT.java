package io.pidpool.client;

import static io.pidpool.client.testing.SdkHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.read.ListAppender;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.RecordingListener.Kind;
import io.pidpool.client.testing.SdkIT;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import io.pidpool.core.secret.SecretSealer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * {@code secretKeys}/{@code secretKey} with real AES-GCM: PID nodes sealed by the servers' {@link
 * SecretSealer} open in the SDK; a wrong or unknown key is reported in the node; no password and no
 * key reaches a log line (every SDK logger at DEBUG while the test runs).
 */
class PidClientSecretKeysIT extends SdkIT {
    private static final byte[] RAW_1 = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RAW_2 = "fedcba9876543210".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RAW_WRONG = "a wrong key, but 32 bytes long!!".getBytes(StandardCharsets.US_ASCII);
    private static final String KEY_1 = Base64.getEncoder().encodeToString(RAW_1);
    private static final String KEY_2 = Base64.getEncoder().encodeToString(RAW_2);
    private static final String KEY_WRONG = Base64.getEncoder().encodeToString(RAW_WRONG);

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final Logger sdk = (Logger) LoggerFactory.getLogger("io.pidpool");
    private Level sdkLevel;

    /** After {@link SdkIT}'s set-up: every SDK logger at DEBUG, captured. */
    @BeforeEach
    void captureLogs() {
        logs.start();
        root.addAppender(logs);
        sdkLevel = sdk.getLevel();
        sdk.setLevel(Level.DEBUG);
    }

    @Override
    protected void afterClose() {
        sdk.setLevel(sdkLevel);
        root.detachAppender(logs);
    }

    private static AccountPayload sealedBy(SecretSealer sealer, String password) {
        return new AccountPayload(100, 0, sealer.seal(password), Map.of());
    }

    private void awaitError(FakeLeader.Instance instance, String pid) {
        await().atMost(WAIT)
                .until(() -> leader.read(instance, pid).map(PidNode::hasError).orElse(false));
    }

    @Test
    void aKeyringOpensWhatTheServersSealedAndReportsWhatItCannotOpen() {
        // the servers' keyring mid-rotation: k2 seals now, k1 sealed the older passwords
        SecretSealer servers = SecretSealer.fromConfig("k2", Map.of("k1", KEY_1, "k2", KEY_2));
        SecretSealer oldServers = SecretSealer.fromConfig("k1", Map.of("k1", KEY_1));
        SecretSealer impostor = SecretSealer.fromConfig("k1", Map.of("k1", KEY_WRONG));
        SecretSealer unknown = SecretSealer.fromConfig("k9", Map.of("k9", KEY_1));
        PidClient client = harness.start(harness.builder(listener).secretKeys(Map.of("k1", KEY_1, "k2", KEY_2)));
        FakeLeader.Instance instance = harness.handshake(client);

        leader.add(instance, "p-new", sealedBy(servers, "pw-new-Ωmega"));
        leader.add(instance, "p-old", sealedBy(oldServers, "pw-old-1"));
        leader.add(instance, "p-wrong", sealedBy(impostor, "pw-wrong-2"));
        leader.add(instance, "p-unknown", sealedBy(unknown, "pw-unknown-3"));
        harness.awaitState(instance, "p-new", PidState.ADDED);
        harness.awaitState(instance, "p-old", PidState.ADDED);
        awaitError(instance, "p-wrong");
        awaitError(instance, "p-unknown");

        assertThat(listener.heldAccount("p-new").secret()).isEqualTo("pw-new-Ωmega");
        assertThat(listener.heldAccount("p-old").secret()).isEqualTo("pw-old-1");
        assertThat(client.heldPids()).containsExactlyInAnyOrder("p-new", "p-old");
        assertThat(listener.kinds("p-wrong")).isEmpty(); // the listener never saw it
        assertThat(listener.kinds("p-unknown")).isEmpty();
        PidNode wrong = leader.read(instance, "p-wrong").orElseThrow();
        assertThat(wrong.state()).isEqualTo(PidState.ADDING);
        assertThat(wrong.error()).startsWith("cannot open secret: ").contains("failed authentication under key 'k1'");
        assertThat(leader.read(instance, "p-unknown").orElseThrow().error())
                .startsWith("cannot open secret: ")
                .contains("no key 'k9' in the keyring");

        List<String> secrets = List.of(
                "pw-new-Ωmega",
                "pw-old-1",
                "pw-wrong-2",
                "pw-unknown-3",
                KEY_1,
                KEY_2,
                KEY_WRONG,
                hex(RAW_1),
                hex(RAW_2),
                new String(RAW_1, StandardCharsets.US_ASCII),
                new String(RAW_2, StandardCharsets.US_ASCII));
        for (String text : List.of(wrong.error(), client.toString())) {
            assertThat(text).doesNotContain(secrets);
        }
        assertNoLogContains(secrets);
    }

    @Test
    void aSingleConfiguredKeyOpensWhatServersWithThatKeySealed() {
        SecretSealer servers = SecretSealer.fromSingleKey(KEY_1); // security.secretKey
        PidClient client = harness.start(harness.builder(listener).secretKey(KEY_1));
        FakeLeader.Instance instance = harness.handshake(client);

        leader.add(instance, "p1", sealedBy(servers, "correct horse battery staple"));
        harness.awaitState(instance, "p1", PidState.ADDED);
        leader.update(instance, "p1", sealedBy(servers, "tr0ub4dor&3"));
        harness.awaitState(instance, "p1", PidState.UPDATED);

        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.UPDATED);
        assertThat(listener.heldAccount("p1").secret()).isEqualTo("tr0ub4dor&3");
        assertNoLogContains(List.of("correct horse battery staple", "tr0ub4dor&3", KEY_1, hex(RAW_1)));
        assertThat(logs.list).isNotEmpty(); // the capture works: the SDK did log (at INFO and DEBUG)
    }

    private void assertNoLogContains(List<String> secrets) {
        List<String> texts = new ArrayList<>();
        for (ILoggingEvent event : logs.list) {
            texts.add(event.getFormattedMessage());
            for (IThrowableProxy t = event.getThrowableProxy(); t != null; t = t.getCause()) {
                texts.add(t.getClassName() + ": " + t.getMessage());
                for (StackTraceElementProxy frame : t.getStackTraceElementProxyArray()) {
                    texts.add(frame.getSTEAsString());
                }
            }
            if (event.getArgumentArray() != null) {
                for (Object arg : event.getArgumentArray()) {
                    texts.add(String.valueOf(arg));
                }
            }
        }
        assertThat(texts).isNotEmpty();
        for (String text : texts) {
            assertThat(text).doesNotContain(secrets);
        }
    }

    private static String hex(byte[] bytes) {
        return HexFormat.of().formatHex(bytes);
    }
}
