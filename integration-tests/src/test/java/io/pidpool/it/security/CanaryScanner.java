package io.pidpool.it.security;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Looks for a canary string in text and bytes, in the forms a leak would take: plain, Base64
 * (standard and URL-safe, at each of the three byte alignments it can have inside a longer encoded
 * blob) and hex (lower and upper case). Collects findings as {@code source → form}; thread-confined.
 */
final class CanaryScanner {
    private final Map<String, String> forms;
    private final List<String> findings = new ArrayList<>();
    private long scannedSources;
    private long scannedChars;

    CanaryScanner(String canary) {
        this.forms = forms(canary);
    }

    /** form name → the text to look for. */
    static Map<String, String> forms(String canary) {
        byte[] bytes = canary.getBytes(StandardCharsets.UTF_8);
        Map<String, String> forms = new LinkedHashMap<>();
        forms.put("plain", canary);
        for (int shift = 0; shift < 3; shift++) {
            // the canary preceded by `shift` bytes: the characters that encode only canary bits
            byte[] shifted = new byte[shift + bytes.length];
            System.arraycopy(bytes, 0, shifted, shift, bytes.length);
            String encoded = Base64.getEncoder().withoutPadding().encodeToString(shifted);
            int skip = shift == 0 ? 0 : (shift == 1 ? 2 : 3);
            int stableEnd = ((shift + bytes.length) / 3) * 4; // full groups only
            String core = encoded.substring(skip, stableEnd);
            forms.put("base64+" + shift, core);
            forms.put("base64url+" + shift, core.replace('+', '-').replace('/', '_'));
        }
        String hex = HexFormat.of().formatHex(bytes);
        forms.put("hex", hex);
        forms.put("HEX", hex.toUpperCase(Locale.ROOT));
        return forms;
    }

    /** Scans text (a log, a response body, a column value). */
    void scan(String source, String text) {
        if (text == null) {
            return;
        }
        scannedSources++;
        scannedChars += text.length();
        forms.forEach((form, needle) -> {
            if (text.contains(needle)) {
                findings.add(source + " [" + form + "]");
            }
        });
    }

    /** Scans raw bytes (ZooKeeper node data, Redis values): byte for byte, and as UTF-8 text. */
    void scan(String source, byte[] data) {
        if (data == null) {
            return;
        }
        scan(source, new String(data, StandardCharsets.ISO_8859_1));
        scan(source + " (utf-8)", new String(data, StandardCharsets.UTF_8));
    }

    List<String> findings() {
        return List.copyOf(findings);
    }

    long scannedSources() {
        return scannedSources;
    }

    long scannedChars() {
        return scannedChars;
    }
}
