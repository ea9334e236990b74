package io.pidpool.it.platform;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.it.platform.PlatformLedger.End;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The platform over real loopback TCP, as client JVMs use it. */
class PlatformServerIT {
    private final PlatformServer server = PlatformServer.start();

    @AfterEach
    void tearDown() {
        server.close();
    }

    @Test
    void clientsLogInActAndLogOutOverTcp() throws Exception {
        try (PlatformClient a = PlatformClient.connect(server.address(), "A");
                PlatformClient b = PlatformClient.connect(server.address(), "B")) {
            String token = a.login("p1");
            assertThat(a.actionIfFresh("p1", token, System.nanoTime(), Long.MAX_VALUE))
                    .isEqualTo(PlatformClient.ActionResult.OK);
            assertThat(server.holder("p1")).contains("A");

            String tokenB = b.login("p1");
            assertThat(server.ledger().doubleLogins()).hasSize(1);
            assertThat(a.actionIfFresh("p1", token, System.nanoTime(), Long.MAX_VALUE))
                    .isEqualTo(PlatformClient.ActionResult.REJECTED);
            assertThat(a.logout("p1", token)).isEqualTo("STALE");
            assertThat(b.logout("p1", tokenB)).isEqualTo("OK");
            assertThat(server.ledger().violations()).hasSize(1);
        }
    }

    @Test
    void aStaleHoldCheckIsNotSent() throws Exception {
        try (PlatformClient a = PlatformClient.connect(server.address(), "A")) {
            String token = a.login("p1");
            long checkedLongAgo = System.nanoTime() - Duration.ofSeconds(1).toNanos();
            assertThat(a.actionIfFresh(
                            "p1", token, checkedLongAgo, Duration.ofMillis(100).toNanos()))
                    .isEqualTo(PlatformClient.ActionResult.SKIPPED);
            assertThat(server.ledger().events(e -> e.kind() == PlatformLedger.Kind.ACTION))
                    .isEmpty();
        }
    }

    @Test
    void aDroppedConnectionEndsItsLogins() throws Exception {
        PlatformClient a = PlatformClient.connect(server.address(), "A");
        String token = a.login("p1");
        a.close();
        await().atMost(Duration.ofSeconds(5))
                .until(() -> server.ledger().login(token).map(l -> !l.isOpen()).orElse(false));
        assertThat(server.ledger().login(token).orElseThrow().end()).isEqualTo(End.DISCONNECTED);
        assertThat(server.holder("p1")).isEmpty();
    }
}
