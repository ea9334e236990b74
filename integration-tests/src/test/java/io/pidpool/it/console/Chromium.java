package io.pidpool.it.console;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium for the console tests: Debian's {@code chromium} and {@code chromedriver}
 * (never a downloaded browser: the driver binary is handed to {@link ChromeDriverService}, so
 * Selenium Manager is not consulted), with the flags this closed-network machine needs and a fresh
 * profile under {@code target/}. {@link #close()} quits the browser and the driver.
 */
final class Chromium implements AutoCloseable {
    static final Path BINARY = Path.of(System.getProperty("pidpool.it.chromium", "/usr/bin/chromium"));
    static final Path DRIVER = Path.of(System.getProperty("pidpool.it.chromedriver", "/usr/bin/chromedriver"));
    static final Duration WAIT = Duration.ofSeconds(90);

    final ChromeDriver driver;
    private final Path out;

    private Chromium(ChromeDriver driver, Path out) {
        this.driver = driver;
        this.out = out;
    }

    /** Skips the calling test (JUnit assumption) when the packages are not installed. */
    static void assumeInstalled() {
        assumeTrue(
                Files.isExecutable(BINARY) && Files.isExecutable(DRIVER),
                "skipped: the console browser tests need Debian's chromium and chromium-driver at " + BINARY + " and "
                        + DRIVER + " (apt-get install -y chromium chromium-driver; .ci/run does)");
    }

    /** Starts a browser whose profile, driver log and screenshots go under {@code out}. */
    static Chromium start(Path out) throws IOException {
        Files.createDirectories(out);
        Path profile = fresh(out.resolve("chromium-profile"));
        ChromeOptions options = new ChromeOptions();
        options.setBinary(BINARY.toFile());
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--user-data-dir=" + profile.toAbsolutePath(),
                "--window-size=1440,1000",
                "--lang=en-US");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort()
                .withLogFile(out.resolve("chromedriver.log").toFile())
                .build();
        return new Chromium(new ChromeDriver(service, options), out);
    }

    /** Types a token into the sign-in form and submits it. */
    void signIn(String token) {
        type(driver.findElement(By.id("token")), token);
        driver.findElement(By.cssSelector("#login-form button[type=submit]")).click();
    }

    void waitVisible(String id) {
        await(id + " visible").atMost(WAIT).ignoreExceptions().until(() -> driver.findElement(By.id(id))
                .isDisplayed());
    }

    /**
     * Clicks element {@code id} once it can take the click (displayed and enabled): a panel that is
     * still being laid out answers a click with "element not interactable".
     */
    void click(String id) {
        await(id + " clicked").atMost(WAIT).ignoreExceptions().until(() -> {
            WebElement element = driver.findElement(By.id(id));
            if (!element.isDisplayed() || !element.isEnabled()) {
                return false;
            }
            element.click();
            return true;
        });
    }

    /** The visible part of the page, saved as {@code out/name}. */
    void screenshot(String name) throws IOException {
        Path png = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(png, out.resolve(name), StandardCopyOption.REPLACE_EXISTING);
    }

    static void type(WebElement input, String text) {
        input.clear();
        input.sendKeys(text);
    }

    /** The form's error box text, or "" while it is hidden. */
    static String errorOf(WebElement form) {
        WebElement box = form.findElement(By.cssSelector(".form-error"));
        return box.isDisplayed() ? box.getText() : "";
    }

    @Override
    public void close() {
        driver.quit();
    }

    static Path fresh(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.delete(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            }
        }
        return Files.createDirectories(dir);
    }
}
