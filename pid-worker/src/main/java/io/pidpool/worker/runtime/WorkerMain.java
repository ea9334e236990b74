package io.pidpool.worker.runtime;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.worker.task.JdbiTaskStore;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskHandlerProvider;
import io.pidpool.worker.task.TaskSchema;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * The standalone worker: {@code java -jar pid-worker.jar --config worker.yml} joins the ring and
 * runs tasks until SIGTERM/SIGINT, then closes gracefully. Handlers come from {@link
 * TaskHandlerProvider}s on the class path ({@code java -cp pid-worker.jar:my-handlers.jar
 * io.pidpool.worker.runtime.WorkerMain --config ...}); the built-in type {@value #LOG_TYPE} logs the
 * task body. {@code ... --config worker.yml enqueue --type T --key K --body B} inserts one task.
 *
 * <p>Start-up connects with {@code zookeeper.auth} (digest, the servers' identity and ACL) and checks
 * that it may read the cluster's worker nodes before it migrates the task table or joins the ring
 * ({@link #connect}): a worker that could not join exits with the key to fix instead of idling.
 */
@Command(
        name = "pid-worker",
        mixinStandardHelpOptions = true,
        description = "Leaderless consistent-hash task worker (see docs/worker.md).",
        subcommands = WorkerMain.Enqueue.class)
public final class WorkerMain implements Callable<Integer> {
    /** The built-in handler type: logs the task and succeeds. */
    public static final String LOG_TYPE = "pidpool.log";

    static {
        // before the first logger: the standalone jar's own logging unless the operator chose one
        if (System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", "pid-worker-logback.xml");
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(WorkerMain.class);

    @Option(
            names = {"-c", "--config"},
            required = true,
            description = "YAML config file; PIDPOOL_* environment variables override its keys")
    Path config;

    private final CountDownLatch stop = new CountDownLatch(1);
    private final CountDownLatch stopped = new CountDownLatch(1);

    public static void main(String[] args) {
        StopSignals.exitZeroOnStop("pid-worker");
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Parses {@code args} and runs; returns the exit code (2: bad arguments or config). */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cmd = new CommandLine(new WorkerMain());
        cmd.setOut(out).setErr(err);
        cmd.setExecutionExceptionHandler((e, line, parsed) -> {
            if (e instanceof PidPoolException p) {
                line.getErr()
                        .println("pid-worker: " + p.getMessage() + (p.field() == null ? "" : " [" + p.field() + "]"));
                return p.code().retryable() ? 1 : 2;
            }
            throw e;
        });
        return cmd.execute(args);
    }

    WorkerFileConfig loadConfig() {
        for (String warning : WorkerFileConfig.unknownVariableWarnings(System.getenv())) {
            LOG.warn(warning);
        }
        return WorkerFileConfig.load(config, System.getenv());
    }

    @Override
    public Integer call() throws InterruptedException {
        WorkerFileConfig cfg = loadConfig();
        WorkerConfig workerConfig = cfg.workerConfig();
        Map<String, TaskHandler> handlers = discoverHandlers();
        ZkAuth auth = cfg.zooKeeperAuth();
        List<WorkerPool> pools = new ArrayList<>();
        List<CountingWorkerMetrics> metrics = new ArrayList<>();
        try (CuratorFramework curator = connect(cfg, auth);
                HikariDataSource ds = dataSource(cfg, workerConfig.concurrency())) {
            if (cfg.database.migrate) {
                TaskSchema.migrate(ds);
            }
            for (int i = 0; i < cfg.instances; i++) {
                CountingWorkerMetrics m = new CountingWorkerMetrics();
                metrics.add(m);
                pools.add(WorkerPool.builder()
                        .curator(curator)
                        .cluster(cfg.cluster)
                        .group(cfg.group)
                        .dataSource(ds)
                        .migrateSchema(false)
                        .handlers(handlers)
                        .config(workerConfig)
                        .metrics(m)
                        .build()
                        .start());
            }
            // the JVM halts when its hooks return: the hook waits for the graceful close below
            Thread hook = new Thread(
                    () -> {
                        stop.countDown();
                        try {
                            stopped.await(workerConfig.shutdownTimeout().toMillis() + 5000, TimeUnit.MILLISECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "pid-worker-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            LOG.info(
                    "pid-worker ready: cluster={} group={} members={} handlers={} zookeeper.auth={}",
                    cfg.cluster,
                    cfg.group,
                    pools.stream().map(WorkerPool::memberId).toList(),
                    handlers.keySet(),
                    auth.enabled() ? "digest user " + auth.user() : "none");
            stop.await();
            pools.forEach(WorkerPool::close);
            for (int i = 0; i < pools.size(); i++) {
                LOG.info("worker {} stopped: {}", pools.get(i).memberId(), metrics.get(i));
            }
        } finally {
            stopped.countDown();
        }
        return 0;
    }

    static Map<String, TaskHandler> discoverHandlers() {
        Map<String, TaskHandler> handlers = new LinkedHashMap<>();
        handlers.put(
                LOG_TYPE,
                task -> LOG.info("task {} [{}] key={} body={}", task.id(), task.type(), task.key(), task.body()));
        for (TaskHandlerProvider p : ServiceLoader.load(TaskHandlerProvider.class)) {
            p.handlers().forEach((type, h) -> {
                if (handlers.putIfAbsent(type, h) != null) {
                    throw PidPoolException.conflict("handlers", "two providers register task type '%s'", type);
                }
            });
        }
        return handlers;
    }

    static HikariDataSource dataSource(WorkerFileConfig cfg, int concurrency) {
        HikariConfig h = new HikariConfig();
        h.setJdbcUrl(cfg.database.url);
        if (cfg.database.user != null) {
            h.setUsername(cfg.database.user);
        }
        if (cfg.database.password != null) {
            h.setPassword(cfg.database.password);
        }
        h.setMaximumPoolSize(Math.max(cfg.database.maxPoolSize, 2));
        h.setConnectionTimeout(cfg.database.connectionTimeoutMs);
        h.setPoolName("pid-worker");
        // start even when the database is down: the workers back off and retry
        h.setInitializationFailTimeout(-1);
        return new HikariDataSource(h);
    }

    /**
     * A started client with the identity of {@code zookeeper.auth}, connected, that may read the
     * cluster's worker nodes. Checks before anything is written (ZooKeeper or task table), so a worker
     * that could not work fails at once with the key to fix instead of idling outside the ring.
     *
     * @throws PidPoolException UNAVAILABLE if ZooKeeper does not answer within {@code
     *     connectionTimeoutMs}; FORBIDDEN ({@code zookeeper.auth}) if it answers NoAuth
     */
    static CuratorFramework connect(WorkerFileConfig cfg, ZkAuth auth) {
        String namespace = new ZkLayout(cfg.cluster).namespace();
        CuratorFramework c = auth.configure(
                        CuratorFrameworkFactory.builder()
                                .connectString(cfg.zookeeper.connect)
                                .sessionTimeoutMs(cfg.zookeeper.sessionTimeoutMs)
                                .connectionTimeoutMs(cfg.zookeeper.connectionTimeoutMs)
                                .retryPolicy(new ExponentialBackoffRetry(200, 20, 5000)),
                        namespace)
                .build();
        c.start();
        try {
            if (!c.blockUntilConnected(cfg.zookeeper.connectionTimeoutMs, TimeUnit.MILLISECONDS)) {
                throw new PidPoolException(
                        ErrorCode.UNAVAILABLE,
                        "zookeeper.connect",
                        "ZooKeeper at " + cfg.zookeeper.connect + " is not reachable within "
                                + cfg.zookeeper.connectionTimeoutMs + " ms");
            }
            checkAccess(c, "/" + namespace, cfg.group, auth);
            return c;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            c.close();
            throw PidPoolException.unavailable("interrupted while connecting to ZooKeeper", e);
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * Reads (never writes) the cluster's nodes down to the group folder, as far as they exist. The
     * cluster's identity has all permissions or none on them, so a read that passes means the ring
     * node can be created too. ZooKeeper accepts any digest at connect time; a wrong password only
     * shows as NoAuth here.
     */
    private static void checkAccess(CuratorFramework c, String root, String group, ZkAuth auth) {
        for (String path : List.of(root, root + "/workers", root + "/workers/" + group)) {
            try {
                c.getData().forPath(path);
            } catch (KeeperException.NoNodeException e) {
                return; // nothing further down either: the worker creates it with its own ACL
            } catch (KeeperException.NoAuthException e) {
                throw new PidPoolException(
                        ErrorCode.FORBIDDEN,
                        WorkerFileConfig.ZOOKEEPER_AUTH,
                        auth.enabled()
                                ? "ZooKeeper denied digest user '" + auth.user() + "' reading " + path
                                        + " (NoAuth): zookeeper.auth (or PIDPOOL_ZOOKEEPER_AUTH) must be the"
                                        + " user:password of the cluster's pid-servers"
                                : "ZooKeeper denied reading " + path + " (NoAuth): the cluster is secured; set"
                                        + " zookeeper.auth (or PIDPOOL_ZOOKEEPER_AUTH) to the user:password of its"
                                        + " pid-servers",
                        e);
            } catch (Exception e) {
                throw PidPoolException.unavailable("cannot read " + path + " in ZooKeeper: " + e, e);
            }
        }
    }

    /** {@code enqueue}: inserts one task (for smoke tests and operators). */
    @Command(name = "enqueue", mixinStandardHelpOptions = true, description = "Insert one task and print its id.")
    static final class Enqueue implements Callable<Integer> {
        @ParentCommand
        WorkerMain parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--type", required = true, description = "task type (default handler: " + LOG_TYPE + ")")
        String type;

        @Option(names = "--key", required = true, description = "partition key (decides the slot)")
        String key;

        @Option(names = "--body", defaultValue = "{}", description = "task body, JSON by convention")
        String body;

        @Option(names = "--max-attempts", defaultValue = "" + NewTask.DEFAULT_MAX_ATTEMPTS)
        int maxAttempts;

        @Override
        public Integer call() {
            WorkerFileConfig cfg = parent.loadConfig();
            try (HikariDataSource ds = dataSource(cfg, 1)) {
                if (cfg.database.migrate) {
                    TaskSchema.migrate(ds);
                }
                long id = JdbiTaskStore.create(ds)
                        .enqueue(
                                NewTask.of(cfg.group, type, key, body).withMaxAttempts(maxAttempts),
                                Clock.systemUTC().instant());
                spec.commandLine().getOut().println(id);
            }
            return 0;
        }
    }
}
