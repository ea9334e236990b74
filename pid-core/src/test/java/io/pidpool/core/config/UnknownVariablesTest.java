package io.pidpool.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class UnknownVariablesTest {
    static final Map<String, String> KNOWN =
            Map.of("PIDPOOL_ZOOKEEPER_CONNECT", "zookeeper.connect", "PIDPOOL_HTTP_PORT", "http.port");

    @Test
    void aTypoIsNamedWithTheClosestKnownVariable() {
        assertThat(UnknownVariables.warnings(Map.of("PIDPOOL_ZOOKEPER_CONNECT", "x"), KNOWN))
                .containsExactly("environment variable PIDPOOL_ZOOKEPER_CONNECT names no configuration key and is"
                        + " ignored; did you mean PIDPOOL_ZOOKEEPER_CONNECT (zookeeper.connect)?");
    }

    @Test
    void knownProcessTestAndForeignVariablesAreQuiet() {
        assertThat(UnknownVariables.warnings(
                        Map.of(
                                "PIDPOOL_HTTP_PORT", "1",
                                "PIDPOOL_LOG_FORMAT", "json",
                                "PIDPOOL_TEST_POSTGRES_URL", "jdbc:x",
                                "HOME", "/root"),
                        KNOWN))
                .isEmpty();
    }

    @Test
    void editDistanceCountsSingleCharacterEdits() {
        assertThat(UnknownVariables.editDistance("kitten", "sitting")).isEqualTo(3);
        assertThat(UnknownVariables.editDistance("", "abc")).isEqualTo(3);
        assertThat(UnknownVariables.editDistance("same", "same")).isZero();
    }
}
