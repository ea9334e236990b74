package io.pidpool.core.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.PidPoolException;
import java.util.regex.Pattern;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.Chars;
import net.jqwik.api.constraints.StringLength;

/** The hand-written checks of {@link Names} accept exactly what the documented patterns accept. */
class NamesProperties {
    private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_.\\-]{1,64}");
    private static final Pattern PID = Pattern.compile("[A-Za-z0-9_.\\-@]{1,128}");

    private static boolean accepts(java.util.function.Consumer<String> check, String value) {
        try {
            check.accept(value);
            return true;
        } catch (PidPoolException e) {
            return false;
        }
    }

    @Property(tries = 3000)
    void sameAsThePatterns(
            @ForAll
                    @StringLength(max = 140)
                    @CharRange(from = 'a', to = 'c')
                    @CharRange(from = 'X', to = 'Z')
                    @CharRange(from = '0', to = '2')
                    @Chars({'_', '-', '.', '@', '/', '#', ' ', '{', 'é', '\u0000'})
                    String value) {
        boolean notDots = !value.equals(".") && !value.equals("..");
        assertThat(accepts(v -> Names.requireToken(v, "f"), value))
                .isEqualTo(TOKEN.matcher(value).matches() && notDots);
        assertThat(accepts(v -> Names.requirePidId(v, "f"), value))
                .isEqualTo(PID.matcher(value).matches() && notDots);
    }
}
