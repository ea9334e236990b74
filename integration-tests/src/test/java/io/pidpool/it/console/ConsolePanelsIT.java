package io.pidpool.it.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.ElementNotInteractableException;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * The console's panels for the endpoints a server may or may not have (usage, alerts,
 * recommendations, the batch list, the audit log), in headless Chromium against a scripted API: a
 * loopback HTTP server that serves the console's real files from the class path and answers
 * {@code /api/v1} with canned JSON in the shapes of the operator API (ApiJson, the advice routes:
 * money as decimal strings, alerts under {@code alerts}, moves under {@code recommendations}, batch
 * summaries with PID counts). What the real stack cannot produce on demand is checked here: usage
 * bars at each level, both sources of usage, an alert whose message quotes markup, a recommendation
 * copied into the Migrate form, a failed batch in the history, an alert acknowledged, a component
 * down, what an operator and a viewer each see (the role from {@code /api/v1/cluster}'s {@code
 * you}), and a token revoked mid-session. Skipped like {@link ConsoleBrowserIT} when Chromium is missing.
 */
class ConsolePanelsIT {
    static final Path OUT = Path.of("target", "console-panels");
    static final String TOKEN = "viewer-token-0123456789";
    static final String MODULE = "fin#risk#scorer";

    record Request(String method, String uri, String authorization) {}

    final List<Request> requests = new CopyOnWriteArrayList<>();
    final Map<String, String> answers = new ConcurrentHashMap<>();
    final Map<String, Integer> statuses = new ConcurrentHashMap<>();
    HttpServer server;
    Chromium chromium;

    @AfterEach
    void stop() {
        if (chromium != null) {
            chromium.close();
        }
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void rendersUsageAlertsRecommendationsHistoryAndPermissionsFromTheApiShapes() throws Exception {
        Chromium.assumeInstalled();
        script();
        String base = startServer();
        chromium = Chromium.start(OUT);
        WebDriver browser = chromium.driver;
        JavascriptExecutor js = (JavascriptExecutor) browser;

        browser.get(base + "/");
        chromium.waitVisible("login");
        chromium.signIn(TOKEN);
        chromium.waitVisible("app");
        await("PIDs shown")
                .atMost(Chromium.WAIT)
                .ignoreExceptions()
                .until(() -> browser.findElements(By.cssSelector("#pids-body tr[data-pid]"))
                                .size()
                        == 4);

        // usage bars: from the PID view's "used", from /api/v1/usage, and unknown
        assertThat(usage(browser, "p-ok")).isEqualTo("fill-ok|100 / 1,000");
        assertThat(usage(browser, "p-high")).isEqualTo("fill-high|900 / 1,000");
        assertThat(usage(browser, "p-over")).isEqualTo("fill-over|1,200 / 1,000");
        assertThat(usage(browser, "p-unknown")).isEqualTo("fill-unknown|— / 1,000");
        assertThat(browser.findElement(By.cssSelector("tr[data-pid='p-over'] .pid-error"))
                        .getText())
                .isEqualTo("login conflict reported by the SDK");

        // health per component, the leader, two members
        assertThat(browser.findElement(By.cssSelector("#health .health-down")).getText())
                .isEqualTo("redis");
        assertThat(browser.findElement(By.id("leader")).getText()).isEqualTo("s1");
        assertThat(browser.findElements(By.cssSelector("#members tbody tr"))).hasSize(2);

        // an alert whose message quotes markup is shown as text
        WebElement alerts = browser.findElement(By.id("alerts-body"));
        assertThat(alerts.getText())
                .contains("CRITICAL")
                .contains("PID_UTILISATION")
                .contains("<b>p-over</b> used 120 % of its quota");
        assertThat(alerts.findElements(By.tagName("b"))).isEmpty();
        assertThat(browser.findElement(By.cssSelector(".tile-bad .tile-value")).getText())
                .isEqualTo("1");

        // a recommendation, its cost summary, and "Prefill migrate form"
        WebElement recommendations = browser.findElement(By.id("recommendations-body"));
        assertThat(recommendations.getText())
                .contains("Projected overage cost 190.00 → 0.00 (saving 190.00)")
                .contains("cost -190.00")
                .contains("Move 1 PID (p-high)");
        recommendations.findElement(By.cssSelector("button.prefill")).click();
        WebElement migrate = browser.findElement(By.id("form-migrate"));
        assertThat(migrate.isDisplayed()).isTrue();
        assertThat(migrate.findElement(By.name("pids")).getAttribute("value")).isEqualTo("p-high");
        assertThat(migrate.findElement(By.name("to")).getAttribute("value")).isEqualTo("ops#chat#bot");

        // the server's batch list: PID counts, a failed batch
        WebElement batches = browser.findElement(By.id("batches-body"));
        assertThat(batches.getText())
                .contains("ADD 3 PIDs to fin#risk#scorer")
                .contains("MIGRATE 1 PID to ops#chat#bot")
                .contains("1 operation failed")
                .doesNotContain("not available");
        // the audit log is for admins: an operator does not see the panel, and it is not even asked for
        assertThat(browser.findElement(By.id("audit")).isDisplayed()).isFalse();
        assertThat(requests).noneMatch(r -> r.uri().startsWith("/api/v1/audit"));
        chromium.screenshot("panels.png");

        // an operator acknowledges the alert; once the API says so, the panel names who did
        answers.put("POST /api/v1/alerts/7/ack", "{\"id\":\"7\",\"acknowledgedBy\":\"bob\"}");
        alerts.findElement(By.cssSelector("button.ack")).click();
        await("ack sent").atMost(Chromium.WAIT).until(() -> requests.stream()
                .anyMatch(r -> r.method().equals("POST") && r.uri().equals("/api/v1/alerts/7/ack")));
        answers.put(
                "GET /api/v1/alerts",
                answers.get("GET /api/v1/alerts")
                        .replace(
                                "\"resolvedAt\":null",
                                "\"resolvedAt\":null,\"acknowledgedBy\":\"bob\","
                                        + "\"acknowledgedAt\":\"2026-11-21T10:05:00Z\""));
        chromium.click("refresh");
        await("acknowledged shown").atMost(Chromium.WAIT).ignoreExceptions().until(() -> browser.findElement(
                        By.cssSelector("#alerts-body .acked"))
                .getText()
                .startsWith("acknowledged by bob"));
        assertThat(browser.findElements(By.cssSelector("#alerts-body button.ack")))
                .isEmpty();

        // a form's 403 is shown with the API's words
        migrate.findElement(By.cssSelector("button[type=submit]")).click();
        await("403 shown").atMost(Chromium.WAIT).until(() -> !Chromium.errorOf(migrate)
                .isEmpty());
        assertThat(Chromium.errorOf(migrate))
                .contains("role viewer may not change this (needs operator)")
                .contains("HTTP 403 · FORBIDDEN");

        // the same token as a viewer: no write forms, no acknowledge or prefill buttons, no audit log
        answers.put(
                "GET /api/v1/cluster",
                answers.get("GET /api/v1/cluster").replace("\"role\":\"operator\"", "\"role\":\"viewer\""));
        answers.put(
                "GET /api/v1/alerts",
                answers.get("GET /api/v1/alerts").replace(",\"acknowledgedBy\":\"bob\"", ",\"acknowledgedBy\":null"));
        chromium.click("refresh");
        await("viewer sees no forms").atMost(Chromium.WAIT).ignoreExceptions().until(() -> !browser.findElement(
                        By.id("operations"))
                .isDisplayed());
        assertThat(browser.findElements(By.cssSelector("form.op-form"))).noneMatch(WebElement::isDisplayed);
        assertThat(browser.findElements(By.cssSelector("#alerts-body button.ack")))
                .isEmpty();
        assertThat(browser.findElements(By.cssSelector("#recommendations-body button.prefill")))
                .isEmpty();
        assertThat(browser.findElement(By.id("audit")).isDisplayed()).isFalse();
        assertThat(browser.findElement(By.tagName("body")).getAttribute("data-role"))
                .isEqualTo("viewer");
        chromium.screenshot("viewer.png");

        // an admin: the audit log in its own panel, paged by the server's cursor (limit 25, before=next)
        answers.put(
                "GET /api/v1/cluster",
                answers.get("GET /api/v1/cluster").replace("\"role\":\"viewer\"", "\"role\":\"admin\""));
        statuses.remove("GET /api/v1/audit");
        answers.put("GET /api/v1/audit?limit=25", auditPage(2000, 25, "\"1976\""));
        answers.put("GET /api/v1/audit?limit=25&before=1976", auditPage(1975, 3, "null"));
        chromium.click("refresh");
        await("audit page 1")
                .atMost(Chromium.WAIT)
                .ignoreExceptions()
                .until(() -> browser.findElements(By.cssSelector("#audit-body tbody tr"))
                                .size()
                        == 25);
        assertThat(browser.findElement(By.id("operations")).isDisplayed()).isTrue();
        assertThat(browser.findElement(By.id("audit-page")).getText()).isEqualTo("page 1");
        assertThat(browser.findElement(By.id("audit-newer")).isEnabled()).isFalse();
        assertThat(browser.findElement(By.id("audit-body")).getText())
                .contains("write.rejected")
                .contains("<script>alert(1)</script>");
        assertThat(browser.findElements(By.cssSelector("#audit-body script"))).isEmpty();
        browser.findElement(By.id("audit-older")).click();
        await("audit page 2")
                .atMost(Chromium.WAIT)
                .ignoreExceptions()
                .until(() -> browser.findElement(By.id("audit-page")).getText().equals("page 2")
                        && browser.findElements(By.cssSelector("#audit-body tbody tr"))
                                        .size()
                                == 3);
        assertThat(browser.findElement(By.id("audit-count")).getText()).isEqualTo("entries 26–28 (the oldest)");
        assertThat(browser.findElement(By.id("audit-older")).isEnabled()).isFalse();
        assertThat(requests).anyMatch(r -> r.uri().equals("/api/v1/audit?limit=25&before=1976"));
        browser.findElement(By.id("audit-newer")).click();
        await("back to page 1")
                .atMost(Chromium.WAIT)
                .ignoreExceptions()
                .until(() -> browser.findElements(By.cssSelector("#audit-body tbody tr"))
                                .size()
                        == 25);
        chromium.screenshot("audit.png");

        // every API request carried the token in the header, never in the URL
        assertThat(requests).allSatisfy(r -> {
            if (r.uri().startsWith("/api/")) {
                assertThat(r.authorization()).isEqualTo("Bearer " + TOKEN);
            }
            assertThat(r.uri()).doesNotContain(TOKEN);
        });
        assertThat(requests)
                .anyMatch(r -> r.method().equals("POST") && r.uri().startsWith("/api/v1/batches?wait=true"));

        // the token is revoked: the next refresh signs out and says why. After the submit above the
        // console refreshes itself every second, so its own refresh may sign out before the click:
        // then the session bar, with the button, is hidden already
        answers.clear();
        try {
            browser.findElement(By.id("refresh")).click();
        } catch (ElementNotInteractableException signedOutAlready) {
            assertThat(browser.findElement(By.id("session")).isDisplayed()).isFalse();
        }
        chromium.waitVisible("login");
        assertThat(browser.findElement(By.id("login-error")).getText()).isEqualTo("Signed out: invalid bearer token");
        assertThat(js.executeScript("return sessionStorage.getItem('pidpool.token')"))
                .isNull();
    }

    /** {@code count} audit entries with ids from {@code newest} down, and the page's {@code next}. */
    private static String auditPage(long newest, int count, String next) {
        StringBuilder entries = new StringBuilder();
        for (int i = 0; i < count; i++) {
            long id = newest - i;
            if (i > 0) {
                entries.append(',');
            }
            entries.append("{\"id\":\"")
                    .append(id)
                    .append("\",\"at\":\"2026-11-21T10:00:00Z\",\"actor\":\"ops\",\"action\":\"")
                    .append(i % 2 == 0 ? "batch.accepted" : "write.rejected")
                    .append("\",\"target\":\"")
                    .append(id)
                    .append("\",\"detail\":\"")
                    .append(i == 1 ? "400 INVALID_ARGUMENT module: <script>alert(1)</script>" : "1 operations {ADD=1}")
                    .append("\"}");
        }
        return "{\"entries\":[" + entries + "],\"next\":" + next + "}";
    }

    /** "fill-<level>|<text>" of a PID's usage bar. */
    private static String usage(WebDriver browser, String pid) {
        WebElement cell = browser.findElement(By.cssSelector("tr[data-pid='" + pid + "'] .pid-usage"));
        String fill = cell.findElement(By.cssSelector(".fill")).getAttribute("class");
        return fill.replace("fill ", "") + "|" + cell.getText();
    }

    // ---------------------------------------------------------------- the scripted API

    private void script() {
        answers.put(
                "GET /api/v1/cluster",
                """
                {"cluster":"default","self":"s1","leader":"s1","epoch":3,"you":{"name":"bob","role":"operator"},
                 "members":[{"id":"s1","leader":true},{"id":"s2","leader":false}],
                 "health":{"status":"DOWN","components":{
                   "zookeeper":{"status":"UP","detail":"session 5000 ms"},
                   "database":{"status":"UP","detail":"H2"},
                   "redis":{"status":"DOWN","detail":"no answer within 2 s"}}}}""");
        answers.put(
                "GET /api/v1/modules",
                """
                {"modules":[{"module":"fin#risk#scorer","servers":2,"monthlyDemand":0,"pids":4,"assignable":4,"held":3,
                  "instances":[{"instance":"a-1","host":"h1","weight":1,"live":true,"held":2,"pending":0},
                               {"instance":"b-2","host":"h2","weight":1,"live":true,"held":1,"pending":1}]}]}""");
        answers.put(
                "GET /api/v1/pids",
                """
                {"pids":[
                  {"id":"p-high","module":"fin#risk#scorer","status":"ACTIVE","monthlyQuota":1000,"overageAllowance":0,
                   "instance":"a-1","nodeState":"ADDED","error":"","used":900},
                  {"id":"p-ok","module":"fin#risk#scorer","status":"ACTIVE","monthlyQuota":1000,"overageAllowance":0,
                   "instance":"a-1","nodeState":"ADDED","error":"","used":100},
                  {"id":"p-over","module":"fin#risk#scorer","status":"COOLDOWN","monthlyQuota":1000,"overageAllowance":500,
                   "instance":"b-2","nodeState":"DELETING","error":"login conflict reported by the SDK"},
                  {"id":"p-unknown","module":"fin#risk#scorer","status":"ACTIVE","monthlyQuota":1000,"overageAllowance":0,
                   "instance":null,"nodeState":null,"error":""}],
                 "next":null}""");
        answers.put(
                "GET /api/v1/usage",
                """
                {"modules":[{"module":"fin#risk#scorer","used":2200,"projectedOverageCost":"190.00"}],
                 "pids":[{"id":"p-over","used":1200}]}""");
        answers.put(
                "GET /api/v1/alerts",
                """
                {"state":"open","alerts":[{"id":"7","key":"PID_UTILISATION:p-over:100","kind":"PID_UTILISATION",
                  "severity":"CRITICAL","subject":"p-over","message":"<b>p-over</b> used 120 % of its quota",
                  "state":"OPEN","occurrences":3,"firstSeen":"2026-11-20T10:00:00Z","lastSeen":"2026-11-21T10:00:00Z",
                  "resolvedAt":null}]}""");
        answers.put(
                "GET /api/v1/recommendations",
                """
                {"month":"2026-11","at":"2026-11-21T10:00:00Z","costBefore":"190.00","costAfter":"0.00","saving":"190.00",
                 "moves":1,"moveLimitReached":false,"recommendations":[{
                   "source":{"module":"fin#risk#scorer","costBefore":"0","costAfter":"0"},
                   "target":{"module":"ops#chat#bot","costBefore":"190.00","costAfter":"0"},
                   "pids":["p-high"],"movedRemaining":100,"totalCostBefore":"190.00","totalCostAfter":"0.00",
                   "costDelta":"-190.00","standaloneDelta":"-190.00",
                   "explanation":"Move 1 PID (p-high) from fin#risk#scorer to ops#chat#bot."}]}""");
        answers.put(
                "GET /api/v1/batches",
                """
                {"batches":[
                  {"id":"250000000000000002","status":"FAILED","requestedBy":"ops","createdAt":"2026-11-21T09:00:00Z",
                   "updatedAt":"2026-11-21T09:00:01Z","operations":[{"type":"MIGRATE","to":"ops#chat#bot","pids":1}],
                   "succeeded":0,"failed":1},
                  {"id":"250000000000000001","status":"DEALED","requestedBy":"ops","createdAt":"2026-11-21T08:00:00Z",
                   "updatedAt":"2026-11-21T08:00:01Z","operations":[{"type":"ADD","module":"fin#risk#scorer","pids":3}],
                   "succeeded":1,"failed":0}]}""");
        statuses.put("GET /api/v1/audit", 403);
        answers.put(
                "GET /api/v1/audit",
                "{\"error\":\"role viewer may not read this (needs admin)\",\"field\":null,\"code\":\"FORBIDDEN\"}");
        statuses.put("POST /api/v1/batches", 403);
        answers.put(
                "POST /api/v1/batches",
                "{\"error\":\"role viewer may not change this (needs operator)\",\"field\":null,\"code\":\"FORBIDDEN\"}");
    }

    private String startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            String uri = exchange.getRequestURI().toString();
            String path = exchange.getRequestURI().getPath();
            requests.add(new Request(method, uri, exchange.getRequestHeaders().getFirst("Authorization")));
            if (path.startsWith("/api/")) {
                String key = method + " " + path;
                String auth = exchange.getRequestHeaders().getFirst("Authorization");
                if (answers.isEmpty() || !("Bearer " + TOKEN).equals(auth)) {
                    send(
                            exchange,
                            401,
                            "application/json",
                            "{\"error\":\"invalid bearer token\",\"field\":\"Authorization\",\"code\":\"UNAUTHENTICATED\"}");
                } else if (answers.containsKey(method + " " + uri)) { // an answer for this very query
                    send(exchange, 200, "application/json", answers.get(method + " " + uri));
                } else if (answers.containsKey(key)) {
                    send(exchange, statuses.getOrDefault(key, 200), "application/json", answers.get(key));
                } else {
                    send(
                            exchange,
                            404,
                            "application/json",
                            "{\"error\":\"Endpoint " + key + " not found\",\"field\":null,\"code\":\"NOT_FOUND\"}");
                }
                return;
            }
            String file = "/console" + (path.equals("/") ? "/index.html" : path);
            try (InputStream in = ConsolePanelsIT.class.getResourceAsStream(file)) {
                if (in == null || path.contains("..")) {
                    send(exchange, 404, "text/plain", "not found");
                    return;
                }
                String type = file.endsWith(".html")
                        ? "text/html"
                        : file.endsWith(".css")
                                ? "text/css"
                                : file.endsWith(".js") ? "text/javascript" : "application/octet-stream";
                byte[] body = in.readAllBytes();
                exchange.getResponseHeaders().set("Content-Type", type);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            }
        }
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }
}
