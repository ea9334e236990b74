package io.pidpool.server.http;

import io.pidpool.server.config.TokenConfig;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The operator API's bearer tokens. Holds only SHA-256 digests of the tokens, so neither a heap
 * dump nor a timing difference in the lookup reveals a prefix of a valid token. Immutable.
 */
public final class BearerTokens {
    private final Map<String, Principal> byDigest;

    private BearerTokens(Map<String, Principal> byDigest) {
        this.byDigest = Map.copyOf(byDigest);
    }

    public static BearerTokens of(List<TokenConfig> tokens) {
        Map<String, Principal> map = new HashMap<>();
        for (TokenConfig token : tokens) {
            map.put(digest(token.token()), new Principal(token.name(), token.role()));
        }
        return new BearerTokens(map);
    }

    public Optional<Principal> authenticate(String token) {
        if (token == null || token.isEmpty()) {
            return Optional.empty();
        }
        return Optional.ofNullable(byDigest.get(digest(token)));
    }

    private static String digest(String token) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
