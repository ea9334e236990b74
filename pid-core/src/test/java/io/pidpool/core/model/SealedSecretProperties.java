package io.pidpool.core.model;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.Chars;
import net.jqwik.api.constraints.NotEmpty;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;

/** What {@link SealedSecret} says of its stored form without making it. */
class SealedSecretProperties {
    @Property(tries = 2000)
    void encodedLengthIsTheLengthOfTheEncoding(
            @ForAll @NotEmpty @Size(max = 3000) byte[] sealed,
            @ForAll @StringLength(min = 1, max = 64) @CharRange(from = 'a', to = 'z') @Chars({'0', '9', '_', '-', '.'})
                    String keyId) {
        if (keyId.equals(".") || keyId.equals("..")) {
            return; // not a token
        }
        SealedSecret secret = new SealedSecret(keyId, sealed);

        assertThat(secret.encodedLength()).isEqualTo(secret.encode().length());
        assertThat(SealedSecret.decode(secret.encode())).isEqualTo(secret);
    }
}
