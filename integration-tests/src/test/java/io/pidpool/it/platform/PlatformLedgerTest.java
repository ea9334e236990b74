package io.pidpool.it.platform;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.testing.ManualTicker;
import io.pidpool.it.platform.PlatformLedger.Answer;
import io.pidpool.it.platform.PlatformLedger.End;
import io.pidpool.it.platform.PlatformLedger.Login;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PlatformLedgerTest {
    private final ManualTicker ticker = new ManualTicker();
    private final PlatformLedger ledger = new PlatformLedger(ticker);

    @Test
    void loginActLogoutIsClean() {
        String token = ledger.login("p1", "A", "c1");
        ticker.advance(Duration.ofMillis(5));
        assertThat(ledger.action("p1", "A", token)).isEqualTo(Answer.OK);
        assertThat(ledger.holder("p1")).contains("A");
        ticker.advance(Duration.ofMillis(5));
        assertThat(ledger.logout("p1", "A", token)).isEqualTo(Answer.OK);

        assertThat(ledger.holder("p1")).isEmpty();
        Login login = ledger.logins("p1").get(0);
        assertThat(login.end()).isEqualTo(End.LOGGED_OUT);
        assertThat(login.loginNanos()).isZero();
        assertThat(login.endNanos()).isEqualTo(Duration.ofMillis(10).toNanos());
        ledger.assertNoDoubleLogin();
        ledger.assertNoViolations();
    }

    @Test
    void aSecondConcurrentLoginSupersedesTheFirstAndFailsTheAssertion() {
        String first = ledger.login("p1", "A", "c1");
        ticker.advance(Duration.ofMillis(1));
        String second = ledger.login("p1", "B", "c2");

        assertThat(ledger.holder("p1")).contains("B");
        assertThat(ledger.doubleLogins()).singleElement().satisfies(d -> {
            assertThat(d.superseded().token()).isEqualTo(first);
            assertThat(d.superseded().end()).isEqualTo(End.SUPERSEDED);
            assertThat(d.superseded().endedBy()).isEqualTo(second);
            assertThat(d.next().client()).isEqualTo("B");
        });
        assertThatThrownBy(ledger::assertNoDoubleLogin)
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("double login of p1");
    }

    @Test
    void theSameClientLoggingInTwiceIsADoubleLoginToo() {
        ledger.login("p1", "A", "c1");
        ledger.login("p1", "A", "c1");
        assertThat(ledger.doubleLogins()).hasSize(1);
    }

    @Test
    void aLoginAfterALogoutIsNoDoubleLogin() {
        String first = ledger.login("p1", "A", "c1");
        ledger.logout("p1", "A", first);
        ledger.login("p1", "B", "c2");
        ledger.assertNoDoubleLogin();
        assertThat(ledger.logins("p1")).extracting(Login::client).containsExactly("A", "B");
        assertThat(ledger.logins("p1", "B")).hasSize(1);
    }

    @Test
    void aUseAfterTheLoginWasSupersededIsRefusedAndRecorded() {
        String stale = ledger.login("p1", "A", "c1");
        ledger.login("p1", "B", "c2");

        assertThat(ledger.action("p1", "A", stale)).isEqualTo(Answer.REJECTED);

        assertThat(ledger.violations()).singleElement().satisfies(v -> assertThat(v.description())
                .contains("A used p1")
                .contains("SUPERSEDED")
                .contains("by B"));
        assertThatThrownBy(ledger::assertNoViolations).isInstanceOf(AssertionError.class);
        // the late logout of a superseded login is harmless: recorded, not a violation
        assertThat(ledger.logout("p1", "A", stale)).isEqualTo(Answer.STALE);
        assertThat(ledger.holder("p1")).contains("B");
        assertThat(ledger.violations()).hasSize(1);
    }

    @Test
    void aUseAfterLogoutAndUnknownTokensAreViolations() {
        String token = ledger.login("p1", "A", "c1");
        ledger.logout("p1", "A", token);
        assertThat(ledger.action("p1", "A", token)).isEqualTo(Answer.REJECTED);
        assertThat(ledger.action("p1", "A", "t999")).isEqualTo(Answer.REJECTED);
        assertThat(ledger.logout("p1", "A", "t999")).isEqualTo(Answer.UNKNOWN);
        assertThat(ledger.action("p2", "A", token))
                .as("token of another account")
                .isEqualTo(Answer.REJECTED);
        assertThat(ledger.violations()).hasSize(4);
    }

    @Test
    void aClosedConnectionEndsItsOpenLoginsSoTheNextLoginIsNoDoubleLogin() {
        String a1 = ledger.login("p1", "A", "c1");
        String a2 = ledger.login("p2", "A", "c1");
        String b3 = ledger.login("p3", "B", "c2");
        ledger.logout("p2", "A", a2);
        ticker.advance(Duration.ofMillis(7));

        ledger.disconnected("c1", "A");

        assertThat(ledger.login(a1).orElseThrow().end()).isEqualTo(End.DISCONNECTED);
        assertThat(ledger.login(a1).orElseThrow().endNanos())
                .isEqualTo(Duration.ofMillis(7).toNanos());
        assertThat(ledger.login(a2).orElseThrow().end()).isEqualTo(End.LOGGED_OUT);
        assertThat(ledger.login(b3).orElseThrow().isOpen()).isTrue();
        ledger.login("p1", "B", "c2");
        ledger.assertNoDoubleLogin();
    }
}
