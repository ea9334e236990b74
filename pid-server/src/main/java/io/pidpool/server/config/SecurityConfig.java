package io.pidpool.server.config;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.secret.SecretSealer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Secrets of the cluster.
 *
 * <p><b>Keyring.</b> PID passwords are sealed with AES-GCM under a keyring ({@link #sealer()}): the
 * single {@code secretKey} (its key id derived from the key, {@link SecretSealer#keyIdOf}) and/or
 * named {@code secretKeys}. Every key of the ring opens; the current one seals: {@code
 * currentKeyId} if set, else the {@code secretKey}'s id, else the only one of {@code secretKeys}.
 * Rotation (docs/security.md): add the new key to {@code secretKeys}, make it current, re-seal, and
 * drop the old key once nothing sealed under it remains.
 *
 * @param secretKey a base64 AES key (16 or 32 bytes); may be empty when {@code secretKeys} is set
 * @param secretKeys key id → base64 AES key; empty for none
 * @param currentKeyId the key id that seals; empty to derive it (see above)
 * @param tokens the bearer tokens of the operator API with their roles
 */
public record SecurityConfig(
        String secretKey, Map<String, String> secretKeys, String currentKeyId, List<TokenConfig> tokens) {
    public SecurityConfig {
        secretKey = secretKey == null ? "" : secretKey;
        secretKeys = secretKeys == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(secretKeys));
        currentKeyId = currentKeyId == null ? "" : currentKeyId;
        tokens = tokens == null ? List.of() : Collections.unmodifiableList(new ArrayList<>(tokens));
    }

    /** One key ({@code security.secretKey}) and tokens. */
    public SecurityConfig(String secretKey, List<TokenConfig> tokens) {
        this(secretKey, Map.of(), "", tokens);
    }

    /** The same keys with other tokens. */
    public SecurityConfig withTokens(List<TokenConfig> newTokens) {
        return new SecurityConfig(secretKey, secretKeys, currentKeyId, newTokens);
    }

    /**
     * The keyring of this configuration.
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} naming the key ({@code security.secretKey},
     *     {@code security.secretKeys.<id>}, {@code security.currentKeyId}); never repeats a key
     */
    public SecretSealer sealer() {
        SecretSealer.Builder ring = SecretSealer.builder();
        String derived = null;
        if (!secretKey.isBlank()) {
            try {
                derived = SecretSealer.fromSingleKey(secretKey).currentKeyId(); // the sealer's own checks
            } catch (PidPoolException ex) {
                throw PidPoolException.invalid(
                        "security.secretKey", "%s", ex.getMessage().replaceFirst("^secretKey ", ""));
            }
            ring.key(derived, secretKey.strip());
        }
        for (Map.Entry<String, String> e : secretKeys.entrySet()) {
            if (e.getKey().equals(derived)) {
                continue; // the same key given twice, once by derived id
            }
            if (e.getValue() == null || e.getValue().isBlank()) {
                throw PidPoolException.invalid(
                        "security.secretKeys." + e.getKey(), "is empty: a base64 AES key of 16 or 32 bytes");
            }
            try {
                ring.key(e.getKey(), e.getValue());
            } catch (PidPoolException ex) {
                throw PidPoolException.invalid(
                        ex.field().startsWith("secretKeys") ? "security." + ex.field() : "security.secretKeys",
                        "%s",
                        ex.getMessage());
            }
        }
        String current;
        if (!currentKeyId.isBlank()) {
            current = currentKeyId.strip();
        } else if (derived != null) {
            current = derived;
        } else if (secretKeys.size() == 1) {
            current = secretKeys.keySet().iterator().next();
        } else if (secretKeys.isEmpty()) {
            throw PidPoolException.invalid(
                    "security.secretKey", "is required (or security.secretKeys): a base64 AES key of 16 or 32 bytes");
        } else {
            throw PidPoolException.invalid(
                    "security.currentKeyId",
                    "is required when security.secretKeys has several keys and security.secretKey is not set;"
                            + " one of %s",
                    secretKeys.keySet());
        }
        try {
            return ring.current(current).build();
        } catch (PidPoolException ex) {
            throw PidPoolException.invalid("security.currentKeyId", "%s", ex.getMessage());
        }
    }

    @Override
    public String toString() {
        return "SecurityConfig[secretKey=***, secretKeys=" + secretKeys.keySet() + ", currentKeyId=" + currentKeyId
                + ", tokens=" + tokens + "]";
    }
}
