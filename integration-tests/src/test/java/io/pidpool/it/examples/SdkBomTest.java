package io.pidpool.it.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The BOM (pid-client-bom, no parent on purpose) pins the versions the SDK is built and tested with:
 * each of its {@code dep.*} properties must equal the build parent's, and its own and the example
 * project's PidPool version the build's.
 */
class SdkBomTest {
    private static final Pattern PROPERTY = Pattern.compile("<(dep\\.[a-z0-9.-]+|pidpool\\.version)>([^<]+)</");
    private static final Pattern PROJECT_VERSION =
            Pattern.compile("<artifactId>pidpool-parent</artifactId>\\s*<version>([^<]+)</version>");

    @Test
    void theBomPinsTheVersionsTheBuildUses() throws IOException {
        String parent = Files.readString(ExampleProject.ROOT.resolve("pom.xml"));
        Map<String, String> built = properties(parent);
        Map<String, String> bom = properties(Files.readString(ExampleProject.ROOT.resolve("pid-client-bom/pom.xml")));
        Matcher version = PROJECT_VERSION.matcher(parent);
        assertThat(version.find()).isTrue();

        assertThat(bom).containsKeys("dep.curator.version", "dep.redisson.version", "dep.netty.version");
        bom.forEach((key, value) -> {
            String expected = key.equals("pidpool.version") ? version.group(1) : built.get(key);
            assertThat(value).as("pid-client-bom %s", key).isEqualTo(expected);
        });
        Map<String, String> example = properties(Files.readString(ExampleProject.DIR.resolve("pom.xml")));
        assertThat(example.get("pidpool.version"))
                .as("examples pidpool.version")
                .isEqualTo(version.group(1));
    }

    private static Map<String, String> properties(String pom) {
        Map<String, String> found = new LinkedHashMap<>();
        Matcher m = PROPERTY.matcher(pom);
        while (m.find()) {
            found.putIfAbsent(m.group(1), m.group(2).trim());
        }
        return found;
    }
}
