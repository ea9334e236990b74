package io.pidpool.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/sdk-quickstart.md shows this project's code, not a copy that can rot: every Java block of the
 * quick start is preceded by {@code <!-- quickstart:NAME -->} and must equal the region between
 * {@code // [quickstart:NAME]} and {@code // [/quickstart:NAME]} of a source file here (indentation
 * removed), and every region must be shown. The code itself compiles with this module and runs in
 * QuickstartExampleIT.
 */
class QuickstartDocTest {
    private static final Path DOC = Path.of("..", "docs", "sdk-quickstart.md");
    private static final Path SOURCES = Path.of("src", "main", "java");
    private static final Pattern DOC_BLOCK =
            Pattern.compile("<!-- quickstart:([a-z-]+) -->\\s*\n```java\n(.*?)```", Pattern.DOTALL);
    private static final Pattern REGION =
            Pattern.compile("[ \\t]*// \\[quickstart:([a-z-]+)]\n(.*?)[ \\t]*// \\[/quickstart:\\1]", Pattern.DOTALL);

    @Test
    void everyJavaBlockOfTheQuickStartIsThisProjectsCode() throws IOException {
        String doc = Files.readString(DOC);
        Map<String, String> regions = regions();
        assertTrue(regions.size() >= 3, "regions found: " + regions.keySet());

        Map<String, String> shown = new LinkedHashMap<>();
        Matcher m = DOC_BLOCK.matcher(doc);
        while (m.find()) {
            shown.put(m.group(1), m.group(2));
        }
        long javaBlocks = Pattern.compile("```java\n").matcher(doc).results().count();
        assertEquals(
                shown.size(), javaBlocks, "every ```java block needs a <!-- quickstart:NAME --> line right above it");

        List<String> problems = new ArrayList<>();
        shown.forEach((name, code) -> {
            String region = regions.get(name);
            if (region == null) {
                problems.add("docs shows quickstart:" + name + ", which no source file has");
            } else if (!region.equals(code)) {
                problems.add("quickstart:" + name + " differs from the example's code; it should read:\n" + region);
            }
        });
        regions.keySet().stream()
                .filter(name -> !shown.containsKey(name))
                .forEach(name -> problems.add("quickstart:" + name + " is not shown in the quick start"));
        if (!problems.isEmpty()) {
            fail(String.join("\n\n", problems));
        }
    }

    private static Map<String, String> regions() throws IOException {
        Map<String, String> regions = new LinkedHashMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher m = REGION.matcher(Files.readString(file));
                while (m.find()) {
                    regions.put(m.group(1), dedent(m.group(2)));
                }
            }
        }
        return regions;
    }

    private static String dedent(String text) {
        List<String> lines = text.lines().toList();
        int indent = lines.stream()
                .filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length())
                .min()
                .orElse(0);
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            out.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
        }
        return out.toString();
    }
}
