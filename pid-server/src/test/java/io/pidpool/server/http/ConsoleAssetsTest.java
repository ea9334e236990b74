package io.pidpool.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.server.config.Role;
import io.pidpool.server.config.TokenConfig;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The web console's files as the HTTP API serves them (no build step: what is in {@code
 * src/main/resources/console} is what the browser gets): every file the page loads, followed
 * through its module imports, answers 200 with a type a browser accepts for it; and no file uses a
 * way of turning data into markup or code (the console builds DOM nodes and text only), nor inline
 * script the page's Content-Security-Policy would block. The browser itself is exercised by
 * {@code ConsoleBrowserIT} in integration-tests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleAssetsTest {
    static final Pattern PAGE_REFERENCE = Pattern.compile("(?:src|href)=\"(?!data:|https?:|#)([^\"]+)\"");
    static final Pattern MODULE_IMPORT = Pattern.compile("(?:import|from)\\s*['\"](\\./[^'\"]+)['\"]");
    static final Map<String, String> TYPES =
            Map.of(".html", "text/html", ".css", "text/css", ".js", "javascript", ".svg", "image/svg+xml");
    /** Sinks that parse HTML or evaluate text. */
    static final List<String> FORBIDDEN = List.of(
            "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "srcdoc");

    final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    HttpApi http;
    String base;

    @BeforeAll
    void start() {
        http = new HttpApi(
                        new HttpApi.Settings("127.0.0.1", 0, 64 * 1024),
                        new InMemoryOperatorApi(),
                        () -> HealthCheck.Report.of(Map.of()),
                        BearerTokens.of(List.of(new TokenConfig("root", "admin-token-0123456789abc", Role.ADMIN))))
                .start();
        base = "http://127.0.0.1:" + http.port();
    }

    @AfterAll
    void stop() {
        http.close();
    }

    @Test
    void everyFileThePageLoadsIsServedWithItsType() throws Exception {
        HttpResponse<String> page = get("/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));

        Set<String> served = new LinkedHashSet<>();
        Deque<String> queue = new ArrayDeque<>();
        references(page.body(), PAGE_REFERENCE, "/").forEach(queue::add);
        while (!queue.isEmpty()) {
            String path = queue.poll();
            if (!served.add(path)) {
                continue;
            }
            HttpResponse<String> file = get(path);
            assertThat(file.statusCode()).as(path).isEqualTo(200);
            String extension = path.substring(path.lastIndexOf('.'));
            assertThat(file.headers().firstValue("Content-Type")).as(path).hasValueSatisfying(t -> assertThat(t)
                    .contains(TYPES.get(extension)));
            if (extension.equals(".js")) {
                String dir = path.substring(0, path.lastIndexOf('/') + 1);
                references(file.body(), MODULE_IMPORT, dir).forEach(queue::add);
            }
        }
        assertThat(served).contains("/console.css", "/js/app.js", "/js/api.js", "/js/dom.js", "/js/csv.js");
        // every script file in the folder is reachable from the page (no dead or forgotten file)
        try (Stream<Path> files = Files.walk(consoleDir())) {
            List<String> scripts = files.filter(f -> f.toString().endsWith(".js"))
                    .map(f -> "/" + consoleDir().relativize(f).toString().replace('\\', '/'))
                    .toList();
            assertThat(served).containsAll(scripts);
        }
    }

    @Test
    void noFileTurnsDataIntoMarkupOrCode() throws IOException {
        try (Stream<Path> files = Files.walk(consoleDir())) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String text = Files.readString(file, StandardCharsets.UTF_8);
                for (String sink : FORBIDDEN) {
                    assertThat(text).as("%s uses %s", file.getFileName(), sink).doesNotContain(sink);
                }
                if (file.toString().endsWith(".html")) {
                    assertThat(text).as("inline script").doesNotContainPattern("<script(?![^>]*\\bsrc=)[^>]*>");
                    assertThat(text).as("inline event handler").doesNotContainPattern("\\son[a-z]+\\s*=");
                    assertThat(text).as("inline style").doesNotContainPattern("\\sstyle\\s*=|<style");
                }
            }
        }
    }

    @Test
    void thePageAllowsScriptsAndRequestsOnlyFromItsOwnServer() throws Exception {
        String page = get("/").body();
        Matcher csp = Pattern.compile("http-equiv=\"Content-Security-Policy\"\\s+content=\"([^\"]+)\"")
                .matcher(page);
        assertThat(csp.find()).as("a Content-Security-Policy meta element").isTrue();
        assertThat(csp.group(1))
                .contains("default-src 'none'")
                .contains("script-src 'self'")
                .contains("connect-src 'self'")
                .doesNotContain("unsafe-inline")
                .doesNotContain("unsafe-eval");
    }

    private static List<String> references(String text, Pattern pattern, String dir) {
        Matcher m = pattern.matcher(text);
        List<String> found = new java.util.ArrayList<>();
        while (m.find()) {
            found.add(URI.create("http://x" + dir).resolve(m.group(1)).getPath());
        }
        return found;
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return client.send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .timeout(Duration.ofSeconds(10))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static Path consoleDir() {
        try {
            return Path.of(ConsoleAssetsTest.class.getResource("/console").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
