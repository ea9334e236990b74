package io.pidpool.it.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class CanaryScannerTest {
    static final String CANARY = "CANARYpw0123456789abcdef";

    @Test
    void findsTheCanaryEmbeddedInEncodedBlobsAtEveryAlignment() {
        for (int prefix = 0; prefix < 6; prefix++) {
            byte[] blob = ("#".repeat(prefix) + CANARY + "~tail~").getBytes(StandardCharsets.UTF_8);
            CanaryScanner scanner = new CanaryScanner(CANARY);
            scanner.scan("b64", "x=" + Base64.getEncoder().encodeToString(blob));
            scanner.scan("url", Base64.getUrlEncoder().encodeToString(blob));
            scanner.scan("hex", HexFormat.of().formatHex(blob));
            scanner.scan("HEX", HexFormat.of().withUpperCase().formatHex(blob));
            scanner.scan("bytes", blob);
            assertThat(scanner.findings())
                    .as("prefix %d", prefix)
                    .anyMatch(f -> f.startsWith("b64 "))
                    .anyMatch(f -> f.startsWith("url "))
                    .anyMatch(f -> f.startsWith("hex "))
                    .anyMatch(f -> f.startsWith("HEX "))
                    .anyMatch(f -> f.startsWith("bytes "));
        }
    }

    @Test
    void findsNothingInTextWithoutTheCanary() {
        CanaryScanner scanner = new CanaryScanner(CANARY);
        scanner.scan(
                "other", "CANARYpw0123456789abcdeX and " + Base64.getEncoder().encodeToString(new byte[64]));
        assertThat(scanner.findings()).isEmpty();
        assertThat(scanner.scannedSources()).isEqualTo(1);
    }
}
