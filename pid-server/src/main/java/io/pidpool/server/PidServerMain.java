package io.pidpool.server;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.server.config.ConfigLoader;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.runtime.PidServer;
import io.pidpool.server.runtime.StandaloneServer;
import io.pidpool.worker.runtime.StopSignals;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code pid-server.jar} entry point (docs/design.md §7):
 *
 * <pre>
 * java -jar pid-server.jar standalone [--http-port 8080] [--zk-port 2181] [--redis-port 6380]
 *                                     [--data-dir ./pidpool-data] [--admin-token TOKEN]
 * java -jar pid-server.jar server --config server.yml
 * </pre>
 *
 * Both print one {@code PidPool ready: ...} line on standard output once the HTTP API answers,
 * then run until the JVM is asked to stop (Ctrl-C, SIGTERM), when a shutdown hook closes
 * everything in reverse start order. {@code standalone} prints a generated admin token before the
 * ready line. Logs go to standard error. Exit codes: 0 after a clean stop, 1 when start-up fails,
 * 2 for a usage error.
 */
@Command(
        name = "pid-server",
        mixinStandardHelpOptions = true,
        versionProvider = PidServerMain.Version.class,
        description = "PidPool cluster server.",
        synopsisSubcommandLabel = "(standalone | server)")
public final class PidServerMain implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(PidServerMain.class);

    /** Registers work to run when the JVM shuts down; replaced in tests. */
    @FunctionalInterface
    public interface ShutdownHooks {
        void add(String name, Runnable action);

        ShutdownHooks RUNTIME = (name, action) -> Runtime.getRuntime().addShutdownHook(new Thread(action, name));
    }

    private final PrintStream out;
    private final PrintStream err;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private PidServerMain(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        StopSignals.exitZeroOnStop("pid-server");
        System.exit(run(args, System.out, System.err, System.getenv(), ShutdownHooks.RUNTIME));
    }

    /**
     * Runs the command line and returns the exit code. {@code standalone} and {@code server} return
     * only after a shutdown hook registered through {@code hooks} has run.
     */
    public static int run(
            String[] args, PrintStream out, PrintStream err, Map<String, String> env, ShutdownHooks hooks) {
        String format = logFormat(env);
        if (!format.equals("text") && !format.equals("json")) {
            // logback.xml picks its appender by this name: any other value would silence the logs
            err.println("pid-server: PIDPOOL_LOG_FORMAT (or -Dpidpool.log.format) must be text or json, was '" + format
                    + "'");
            return 2;
        }
        PidServerMain main = new PidServerMain(out, err);
        CommandLine cli = new CommandLine(main)
                .addSubcommand("standalone", new Standalone(main, hooks))
                .addSubcommand("server", new Server(main, env, hooks));
        cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        return cli.execute(args);
    }

    /** The log format logback.xml chose: the system property, else the variable, else text. */
    static String logFormat(Map<String, String> env) {
        String format = System.getProperty("pidpool.log.format");
        if (format == null) {
            format = env.getOrDefault("PIDPOOL_LOG_FORMAT", "text");
        }
        return format;
    }

    @Override
    public Integer call() {
        spec.commandLine().usage(out);
        return 2;
    }

    @Command(
            name = "standalone",
            mixinStandardHelpOptions = true,
            description = "Run the whole system on this machine: embedded ZooKeeper, Redis and H2 on 127.0.0.1.")
    static final class Standalone implements Callable<Integer> {
        private final PidServerMain main;
        private final ShutdownHooks hooks;

        @Option(
                names = "--http-port",
                paramLabel = "PORT",
                description = "HTTP API and console (default: ${DEFAULT-VALUE}; 0 picks a free port)")
        int httpPort = StandaloneServer.Options.DEFAULT_HTTP_PORT;

        @Option(
                names = "--zk-port",
                paramLabel = "PORT",
                description = "embedded ZooKeeper (default: ${DEFAULT-VALUE})")
        int zkPort = StandaloneServer.Options.DEFAULT_ZK_PORT;

        @Option(names = "--redis-port", paramLabel = "PORT", description = "embedded Redis (default: ${DEFAULT-VALUE})")
        int redisPort = StandaloneServer.Options.DEFAULT_REDIS_PORT;

        @Option(
                names = "--data-dir",
                paramLabel = "DIR",
                description = "where ZooKeeper, Redis and H2 keep data (default: ${DEFAULT-VALUE})")
        Path dataDir = Path.of(StandaloneServer.Options.DEFAULT_DATA_DIR);

        @Option(
                names = "--admin-token",
                paramLabel = "TOKEN",
                description = "admin bearer token (default: a random one, printed)")
        String adminToken;

        Standalone(PidServerMain main, ShutdownHooks hooks) {
            this.main = main;
            this.hooks = hooks;
        }

        @Override
        public Integer call() {
            return main.runUntilShutdown(
                    hooks,
                    () -> new StandaloneServer(
                            new StandaloneServer.Options(httpPort, zkPort, redisPort, dataDir, adminToken)),
                    standalone -> {
                        standalone.start();
                        if (standalone.adminTokenGenerated()) {
                            main.out.println("PidPool admin token: " + standalone.adminToken()
                                    + "  (generated for this run; choose one with --admin-token)");
                        }
                        return standalone.readyLine();
                    });
        }
    }

    @Command(
            name = "server",
            mixinStandardHelpOptions = true,
            description = "Join a cluster on real ZooKeeper, Redis and database servers.",
            footer = {
                "",
                "Every key of server.yml can be set by an environment variable: PIDPOOL_ + the key path in",
                "upper case with '_' for '.' and between words, e.g. PIDPOOL_ZOOKEEPER_CONNECT,",
                "PIDPOOL_ZOOKEEPER_SESSION_TIMEOUT_MS, PIDPOOL_SECURITY_TOKENS='[{token: ..., role: admin}]'."
            })
    static final class Server implements Callable<Integer> {
        private final PidServerMain main;
        private final Map<String, String> env;
        private final ShutdownHooks hooks;

        @Option(names = "--config", paramLabel = "FILE", required = true, description = "server.yml")
        Path config;

        Server(PidServerMain main, Map<String, String> env, ShutdownHooks hooks) {
            this.main = main;
            this.env = env;
            this.hooks = hooks;
        }

        @Override
        public Integer call() {
            return main.runUntilShutdown(
                    hooks,
                    () -> {
                        ConfigLoader loader = new ConfigLoader(env);
                        // before loading: a typo often also makes the configuration invalid
                        for (String warning : loader.unknownVariableWarnings()) {
                            main.err.println("pid-server: warning: " + warning);
                        }
                        ServerConfig loaded = loader.load(config);
                        return new PidServer(loaded);
                    },
                    server -> {
                        server.start();
                        ServerConfig c = server.config();
                        return "PidPool ready: http=http://" + c.http().host() + ":" + server.httpPort()
                                + " zookeeper=" + c.zookeeper().connect() + " redis="
                                + (c.redis().usesRedissonBlock()
                                        ? "(redisson)"
                                        : c.redis().address())
                                + " cluster=" + c.cluster();
                    });
        }
    }

    @FunctionalInterface
    interface Starter<T> {
        /** Starts {@code server} and returns the ready line. */
        String start(T server);
    }

    /**
     * Creates the server, registers its shutdown before starting it (so Ctrl-C during start-up also
     * cleans up), starts it, prints the ready line and waits for the shutdown hook.
     */
    <T extends AutoCloseable> int runUntilShutdown(ShutdownHooks hooks, Supplier<T> create, Starter<T> starter) {
        T server;
        try {
            server = create.get();
        } catch (PidPoolException e) {
            err.println("pid-server: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        hooks.add("pidpool-shutdown", () -> {
            try {
                server.close();
            } catch (Exception e) {
                log.warn("shutdown failed", e);
            } finally {
                stopped.countDown();
            }
        });
        String ready;
        try {
            ready = Objects.requireNonNull(starter.start(server));
        } catch (PidPoolException e) {
            err.println("pid-server: cannot start: " + e.getMessage());
            closeQuietly(server);
            return 1;
        } catch (RuntimeException e) {
            log.error("start-up failed", e);
            err.println("pid-server: cannot start: " + e);
            closeQuietly(server);
            return 1;
        }
        out.println(ready);
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(server);
        }
        return 0;
    }

    private static void closeQuietly(AutoCloseable server) {
        try {
            server.close();
        } catch (Exception e) {
            log.warn("closing after a failed start failed", e);
        }
    }

    /**
     * The version Maven filtered into {@code version.properties} at build time (the same as the
     * jar manifest's {@code Implementation-Version}); also right when run from {@code
     * target/classes}, where there is no manifest.
     */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"PidPool " + version()};
        }

        static String version() {
            java.util.Properties p = new java.util.Properties();
            try (var in = PidServerMain.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (java.io.IOException e) {
                // fall through to the manifest
            }
            String v = p.getProperty("version");
            if (v == null || v.isBlank() || v.startsWith("${")) {
                v = PidServerMain.class.getPackage().getImplementationVersion();
            }
            return v == null ? "(unknown version)" : v;
        }
    }
}
