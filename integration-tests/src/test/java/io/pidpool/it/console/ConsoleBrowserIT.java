package io.pidpool.it.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.client.Registration;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.server.ItSupport;
import io.pidpool.server.runtime.StandaloneServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console end to end, as an operator uses it: a standalone PidPool (embedded ZooKeeper and
 * Redis, H2 file database, the HTTP API and the console), three real {@link PidClient}s in two
 * modules, and headless Chromium (Debian's {@code chromium} and {@code chromium-driver}, never a
 * downloaded browser) driven through Selenium: a rejected and an accepted token, a CSV that fails
 * locally, a batch the API rejects (its message and field shown next to the form, as text), a CSV
 * batch add, a migrate of one PID picked in the table, a server-count change; the PID table must
 * show the holders the SDK clients really have. A screenshot is kept in {@code
 * target/console-e2e/console.png}.
 *
 * <p>Skipped (not failed) when {@code /usr/bin/chromium} or {@code /usr/bin/chromedriver} is
 * missing; {@code .ci/run} installs both. Other paths: {@code -Dpidpool.it.chromium=...}, {@code
 * -Dpidpool.it.chromedriver=...}.
 */
class ConsoleBrowserIT {
    private static final Logger log = LoggerFactory.getLogger(ConsoleBrowserIT.class);

    static final Path OUT = Path.of("target", "console-e2e");
    static final String TOKEN = "console-e2e-admin-token-0123456789";
    static final ModuleKey SCORER = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey BOT = ModuleKey.parse("ops#chat#bot");
    static final Duration WAIT = Chromium.WAIT;
    static final List<String> PIDS = List.of("acct-1001", "acct-1002", "acct-1003", "acct-1004", "acct-1005");

    private final List<AutoCloseable> closing = new ArrayList<>();

    /** A business server: a real PidClient whose listener records what it holds. */
    static final class Instance implements AutoCloseable {
        final String name;
        final PidClient client;
        final Set<String> held = ConcurrentHashMap.newKeySet();
        final Set<String> wrongSecrets = ConcurrentHashMap.newKeySet();

        Instance(String name, ModuleKey module, StandaloneServer stack, String key) {
            this.name = name;
            this.client = PidClient.builder()
                    .connectString(stack.zookeeper().connectString())
                    .cluster(stack.server().config().cluster())
                    .module(module.toString())
                    .redisAddress(stack.redis().address())
                    .instanceId(name)
                    .host(name + ".example.internal")
                    .sessionTimeout(Duration.ofSeconds(6))
                    .startTimeout(Duration.ofSeconds(60))
                    .closeTimeout(Duration.ofSeconds(10))
                    .secretKey(key)
                    .listener(new PidListener() {
                        @Override
                        public void onAssigned(PidAccount account) {
                            if (!account.secret().equals("pw-" + account.id())) {
                                wrongSecrets.add(account.id());
                            }
                            held.add(account.id());
                        }

                        @Override
                        public void onRevoked(PidAccount account) {
                            held.remove(account.id());
                        }
                    })
                    .build();
        }

        Instance start() {
            client.start();
            return this;
        }

        String instanceId() {
            return client.registration().map(Registration::instanceId).orElseThrow();
        }

        @Override
        public void close() {
            client.close();
        }
    }

    @AfterEach
    void closeAll() {
        for (int i = closing.size() - 1; i >= 0; i--) {
            try {
                closing.get(i).close();
            } catch (Exception e) {
                log.warn("closing {}: {}", closing.get(i), e.toString());
            }
        }
    }

    private <T extends AutoCloseable> T closeLater(T resource) {
        closing.add(resource);
        return resource;
    }

    @Test
    void operatorSignsInAddsPidsFromCsvMigratesOneAndSeesTheRealHolders() throws Exception {
        Chromium.assumeInstalled();
        ItSupport.tmpdir();
        Path data = Chromium.fresh(OUT.resolve("data"));
        StandaloneServer stack =
                closeLater(new StandaloneServer(new StandaloneServer.Options(0, 0, 0, data, TOKEN)).start());
        String base = "http://127.0.0.1:" + stack.server().httpPort();
        String key = Files.readString(data.resolve("secret.key"), StandardCharsets.US_ASCII)
                .trim();
        Instance scorerA = closeLater(new Instance("scorer-a", SCORER, stack, key).start());
        Instance scorerB = closeLater(new Instance("scorer-b", SCORER, stack, key).start());
        Instance bot = closeLater(new Instance("bot-a", BOT, stack, key).start());
        List<Instance> instances = List.of(scorerA, scorerB, bot);

        Chromium chromium = closeLater(Chromium.start(OUT));
        WebDriver browser = chromium.driver;
        JavascriptExecutor js = (JavascriptExecutor) browser;

        // --- sign in: a wrong token is refused with the API's message, the right one is kept for the tab
        browser.get(base + "/");
        chromium.waitVisible("login");
        chromium.signIn("not-the-right-token-0123456789");
        await("rejected token").atMost(WAIT).ignoreExceptions().until(() -> browser.findElement(By.id("login-error"))
                .getText()
                .contains("invalid bearer token"));
        assertThat(browser.findElement(By.id("app")).isDisplayed()).isFalse();
        chromium.screenshot("login.png");
        chromium.signIn(TOKEN);
        chromium.waitVisible("app");
        await("leader shown").atMost(WAIT).ignoreExceptions().until(() -> browser.findElement(By.id("leader"))
                .getText()
                .equals(stack.server().nodeId()));
        assertThat(js.executeScript("return sessionStorage.getItem('pidpool.token')"))
                .isEqualTo(TOKEN);
        await("instances listed").atMost(WAIT).ignoreExceptions().until(() -> instanceIdsShown(browser)
                .containsAll(instances.stream().map(Instance::instanceId).toList()));

        // --- a CSV the console rejects itself: nothing is sent
        WebElement addForm = browser.findElement(By.id("form-add"));
        Chromium.type(addForm.findElement(By.name("module")), SCORER.toString());
        Chromium.type(
                addForm.findElement(By.name("csv")),
                "id,secret,monthlyQuota\nacct-1001,pw-acct-1001,1000\nacct-1002,pw,lots\n");
        addForm.findElement(By.cssSelector("button[type=submit]")).click();
        await("CSV error shown").atMost(WAIT).until(() -> !Chromium.errorOf(addForm)
                .isEmpty());
        assertThat(Chromium.errorOf(addForm))
                .contains("line 3")
                .contains("monthlyQuota of 'acct-1002' must be a whole number")
                .doesNotContain("pw-acct-1001");

        // --- a batch the API rejects: its message and field appear as text, the markup stays inert
        Chromium.type(addForm.findElement(By.name("module")), "<img src=x id=injected>#risk#scorer");
        Chromium.type(addForm.findElement(By.name("csv")), csv(PIDS));
        addForm.findElement(By.cssSelector("button[type=submit]")).click();
        await("API error shown").atMost(WAIT).ignoreExceptions().until(() -> Chromium.errorOf(addForm)
                .contains("field: operations[0].module"));
        assertThat(Chromium.errorOf(addForm))
                .contains("<img src=x id=injected>")
                .contains("HTTP 400");
        assertThat(browser.findElements(By.id("injected"))).isEmpty();
        chromium.screenshot("api-error.png");
        assertThat(ItSupport.get(base + "/api/v1/pids", TOKEN).body()).contains("\"pids\":[]");

        // --- the CSV batch add
        Chromium.type(addForm.findElement(By.name("module")), SCORER.toString());
        Chromium.type(addForm.findElement(By.name("csv")), csv(PIDS));
        addForm.findElement(By.cssSelector("button[type=submit]")).click();
        awaitResult(browser, addForm, "Done: 5 PIDs added to fin#risk#scorer");
        assertThat(addForm.findElement(By.name("csv")).getAttribute("value"))
                .as("the secrets are cleared once sent")
                .isEmpty();

        // every PID shown with the instance that really holds it (the SDK listener's view)
        await("table shows the real holders").atMost(WAIT).ignoreExceptions().until(() -> {
            Map<String, Row> rows = rows(browser);
            Map<String, String> holders = holders(instances);
            return holders.keySet().containsAll(PIDS)
                    && PIDS.stream()
                            .allMatch(pid -> rows.containsKey(pid)
                                    && rows.get(pid).module().equals(SCORER.toString())
                                    && rows.get(pid).holder().equals(holders.get(pid))
                                    && rows.get(pid).state().equals("ADDED"));
        });
        assertThat(scorerA.held.size() + scorerB.held.size()).isEqualTo(5);
        assertThat(Math.abs(scorerA.held.size() - scorerB.held.size())).isLessThanOrEqualTo(1);
        await("held counts per instance").atMost(WAIT).ignoreExceptions().until(() -> {
            Map<String, String> counts = heldCountsShown(browser);
            return counts.get(scorerA.instanceId()).equals(Integer.toString(scorerA.held.size()))
                    && counts.get(scorerB.instanceId()).equals(Integer.toString(scorerB.held.size()));
        });

        // --- migrate one PID, picked in the table, to the other module
        String moving = PIDS.get(0);
        browser.findElement(By.cssSelector("tr[data-pid='" + moving + "'] td.check input"))
                .click();
        browser.findElement(By.cssSelector(".tab[data-tab=migrate]")).click();
        WebElement migrateForm = browser.findElement(By.id("form-migrate"));
        migrateForm.findElement(By.cssSelector(".use-selection")).click();
        assertThat(migrateForm.findElement(By.name("pids")).getAttribute("value"))
                .isEqualTo(moving);
        Chromium.type(migrateForm.findElement(By.name("to")), BOT.toString());
        migrateForm.findElement(By.cssSelector("button[type=submit]")).click();
        awaitResult(browser, migrateForm, "Done: 1 PID moved to ops#chat#bot");
        await("migrated PID shown with its new holder")
                .atMost(WAIT)
                .ignoreExceptions()
                .until(() -> {
                    Row row = rows(browser).get(moving);
                    return bot.held.contains(moving)
                            && row.module().equals(BOT.toString())
                            && row.holder().equals(bot.instanceId())
                            && row.state().equals("ADDED");
                });
        assertThat(scorerA.held).doesNotContain(moving);
        assertThat(scorerB.held).doesNotContain(moving);
        Map<String, String> holders = holders(instances);
        Map<String, Row> rows = rows(browser);
        for (String pid : PIDS) {
            assertThat(rows.get(pid).holder()).as(pid).isEqualTo(holders.get(pid));
        }

        // --- the module's server count through PUT /api/v1/modules/{module}
        browser.findElement(By.cssSelector(".tab[data-tab=servers]")).click();
        WebElement serversForm = browser.findElement(By.id("form-servers"));
        Chromium.type(serversForm.findElement(By.name("module")), SCORER.toString());
        Chromium.type(serversForm.findElement(By.name("servers")), "2");
        Chromium.type(serversForm.findElement(By.name("monthlyDemand")), "40000");
        serversForm.findElement(By.cssSelector("button[type=submit]")).click();
        awaitResult(browser, serversForm, "Done: fin#risk#scorer: servers 2");
        await("module card updated").atMost(WAIT).ignoreExceptions().until(() -> browser.findElement(
                        By.cssSelector("article[data-module='fin#risk#scorer'] .module-servers"))
                .getText()
                .equals("servers 2"));

        // --- the module's own rebalance delay, in the same form (seconds in the form, ms in the API)
        Chromium.type(serversForm.findElement(By.name("rebalanceDelaySeconds")), "30");
        serversForm.findElement(By.cssSelector("button[type=submit]")).click();
        awaitResult(browser, serversForm, "rebalance delay 30 s");
        assertThat(ItSupport.get(base + "/api/v1/modules/fin%23risk%23scorer", TOKEN)
                        .body())
                .contains("\"rebalanceDelayMs\":30000")
                .contains("\"monthlyDemand\":40000");

        // --- a quota change without the password: the holder keeps its login, the quota changes
        String updated = PIDS.get(1);
        browser.findElement(By.cssSelector(".tab[data-tab=update]")).click();
        WebElement updateForm = browser.findElement(By.id("form-update"));
        Chromium.type(updateForm.findElement(By.name("pids")), updated);
        Chromium.type(updateForm.findElement(By.name("monthlyQuota")), "5000");
        updateForm.findElement(By.cssSelector("button[type=submit]")).click();
        awaitResult(browser, updateForm, "Done: quota 5000 for 1 PID");
        assertThat(ItSupport.get(base + "/api/v1/pids/" + updated, TOKEN).body())
                .contains("\"monthlyQuota\":5000")
                .doesNotContain("pw-");
        // an unknown PID: the API's 404 is shown next to the form, nothing is sent
        Chromium.type(updateForm.findElement(By.name("pids")), "acct-9999");
        updateForm.findElement(By.cssSelector("button[type=submit]")).click();
        await("404 shown").atMost(WAIT).until(() -> !Chromium.errorOf(updateForm)
                .isEmpty());
        assertThat(Chromium.errorOf(updateForm)).contains("no PID acct-9999").contains("HTTP 404");

        // --- the audit log (admin): its own panel, readable columns, paged
        await("audit panel")
                .atMost(WAIT)
                .ignoreExceptions()
                .until(() -> browser.findElement(By.id("audit")).isDisplayed()
                        && browser.findElement(By.id("audit-page")).getText().equals("page 1")
                        && browser.findElements(By.cssSelector("#audit-body tbody tr"))
                                        .size()
                                >= 4);
        assertThat(browser.findElement(By.cssSelector("#audit-body thead")).getText())
                .containsIgnoringCase("When")
                .containsIgnoringCase("Who")
                .containsIgnoringCase("What");
        assertThat(browser.findElement(By.id("audit-body")).getText())
                .contains("batch.accepted")
                .doesNotContain("pw-acct");
        Chromium.type(browser.findElement(By.id("audit-filter")), "write.rejected");
        await("audit filter")
                .atMost(WAIT)
                .ignoreExceptions()
                .until(() -> browser.findElements(By.cssSelector("#audit-body tbody tr")).stream()
                        .allMatch(r -> r.getText().contains("write.rejected")));
        browser.findElement(By.id("audit-filter"))
                .sendKeys(
                        org.openqa.selenium.Keys.chord(org.openqa.selenium.Keys.CONTROL, "a"),
                        org.openqa.selenium.Keys.BACK_SPACE);
        await("audit filter cleared")
                .atMost(WAIT)
                .ignoreExceptions()
                .until(() -> browser.findElement(By.id("audit-body")).getText().contains("batch.accepted"));

        // --- the batch history lists the three batches, each DEALED
        await("batch history").atMost(WAIT).ignoreExceptions().until(() -> {
            List<WebElement> batches = browser.findElements(By.cssSelector("#batches-body [data-batch]"));
            return batches.size() >= 3
                    && batches.stream().limit(3).allMatch(b -> b.getText().contains("DEALED"));
        });
        // every panel finished loading: data, "none", or "not available" for an endpoint still missing
        for (String panel : List.of("alerts-body", "recommendations-body", "batches-body", "audit-body", "members")) {
            assertThat(browser.findElement(By.id(panel)).getText())
                    .as(panel)
                    .isNotBlank()
                    .doesNotContain("loading…");
        }
        // no secret anywhere in the page, and nothing the SDK could not decrypt
        assertThat(browser.getPageSource()).doesNotContain("pw-acct");
        instances.forEach(i -> assertThat(i.wrongSecrets).as(i.name).isEmpty());

        fullPageScreenshot(chromium, js);
    }

    /** Waits until the form shows a result containing {@code expected}; fails at once on an error. */
    private static void awaitResult(WebDriver browser, WebElement form, String expected) {
        await(form.getAttribute("id") + " result")
                .atMost(WAIT)
                .ignoreExceptions()
                .failFast(
                        "the form shows an error", () -> !Chromium.errorOf(form).isEmpty())
                .until(() -> {
                    WebElement box = form.findElement(By.cssSelector(".form-result"));
                    return box.isDisplayed() && box.getText().contains(expected);
                });
    }

    static String csv(List<String> pids) {
        StringBuilder csv = new StringBuilder("id,secret,monthlyQuota\n");
        for (int i = 0; i < pids.size(); i++) {
            String pid = pids.get(i);
            // one secret quoted, as a spreadsheet writes it
            String secret = i == 1 ? "\"pw-" + pid + "\"" : "pw-" + pid;
            csv.append(pid)
                    .append(',')
                    .append(secret)
                    .append(',')
                    .append(1000 * (i + 1))
                    .append('\n');
        }
        return csv.toString();
    }

    /** One row of the PID table as rendered. */
    record Row(String module, String holder, String state) {}

    @SuppressWarnings("unchecked")
    private static Map<String, Row> rows(WebDriver browser) {
        List<List<String>> raw = (List<List<String>>) ((JavascriptExecutor) browser)
                .executeScript("return [...document.querySelectorAll('#pids-body tr[data-pid]')].map(r => ["
                        + "r.dataset.pid, r.querySelector('.pid-module').textContent,"
                        + " (r.querySelector('.holder-id') || {textContent: ''}).textContent,"
                        + " r.querySelector('.pid-state').textContent]);");
        Map<String, Row> rows = new TreeMap<>();
        raw.forEach(r -> rows.put(r.get(0), new Row(r.get(1), r.get(2), r.get(3))));
        return rows;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> heldCountsShown(WebDriver browser) {
        List<List<String>> raw = (List<List<String>>) ((JavascriptExecutor) browser)
                .executeScript("return [...document.querySelectorAll('#modules-body tr[data-instance]')].map(r => ["
                        + "r.dataset.instance, r.querySelector('.instance-held').textContent]);");
        Map<String, String> counts = new HashMap<>();
        raw.forEach(r -> counts.put(r.get(0), r.get(1)));
        return counts;
    }

    private static Set<String> instanceIdsShown(WebDriver browser) {
        return heldCountsShown(browser).keySet();
    }

    /** PID → instance id, from the SDK listeners (what the clients really hold). */
    private static Map<String, String> holders(List<Instance> instances) {
        Map<String, String> holders = new TreeMap<>();
        for (Instance instance : instances) {
            String id = instance.instanceId();
            instance.held.forEach(pid -> holders.put(pid, id));
        }
        return holders;
    }

    private static void fullPageScreenshot(Chromium chromium, JavascriptExecutor js) throws IOException {
        WebDriver browser = chromium.driver;
        js.executeScript("window.scrollTo(0, 0)");
        long height =
                ((Number) js.executeScript("return Math.ceil(document.documentElement.scrollHeight)")).longValue();
        browser.manage().window().setSize(new org.openqa.selenium.Dimension(1440, (int) Math.min(4000, height + 200)));
        // one more refresh so the picture shows the state after the resize settled
        String before = browser.findElement(By.tagName("body")).getAttribute("data-refreshed");
        chromium.click("refresh");
        await("refreshed").atMost(WAIT).ignoreExceptions().until(() -> !browser.findElement(By.tagName("body"))
                .getAttribute("data-refreshed")
                .equals(before));
        chromium.screenshot("console.png");
        log.info("console screenshot: {}", OUT.resolve("console.png").toAbsolutePath());
    }
}
