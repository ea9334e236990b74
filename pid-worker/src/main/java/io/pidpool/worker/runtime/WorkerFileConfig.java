package io.pidpool.worker.runtime;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.config.UnknownVariables;
import io.pidpool.core.error.PidPoolException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The standalone worker's YAML file ({@code --config worker.yml}). Every key may also come from an
 * environment variable named {@code PIDPOOL_} + its path in upper snake case, which wins over the
 * file: {@code zookeeper.connect} is {@code PIDPOOL_ZOOKEEPER_CONNECT}, {@code
 * worker.pollIntervalMs} is {@code PIDPOOL_WORKER_POLL_INTERVAL_MS}.
 *
 * <pre>{@code
 * cluster: default            # ZooKeeper namespace /pidpool/<cluster>
 * group: default              # /workers/<group>
 * instances: 1                # ring members in this process
 * zookeeper: { connect: "127.0.0.1:2181", sessionTimeoutMs: 5000,
 *              auth: "pidpool:..." }   # digest user:password of the cluster, as pid-server's
 * database:  { url: "jdbc:postgresql://db:5432/pidpool", user: pidpool, password: "...",
 *              maxPoolSize: 8, migrate: true }
 * worker:    { virtualNodes: 512, batchSize: 100, concurrency: 8, pollIntervalMs: 500,
 *              leaseMs: 30000, handlerTimeoutMs: 10000 }
 * }</pre>
 */
public final class WorkerFileConfig {
    public String cluster = "default";
    public String group = "default";
    public int instances = 1;
    public ZooKeeper zookeeper = new ZooKeeper();
    public Database database = new Database();
    public Worker worker = new Worker();

    /** ZooKeeper connection. */
    public static final class ZooKeeper {
        public String connect = "127.0.0.1:2181";
        public int sessionTimeoutMs = 5000;
        public int connectionTimeoutMs = 5000;
        /**
         * ZooKeeper digest {@code user:password} (pid-server's {@code zookeeper.auth}), empty for none.
         * Never logged; {@link #zooKeeperAuth()} holds the parsed value.
         */
        public String auth = "";
    }

    /** Task-table database. */
    public static final class Database {
        public String url;
        public String user;
        public String password;
        public int maxPoolSize = 8;
        public long connectionTimeoutMs = 5000;
        public boolean migrate = true;
    }

    /** {@link WorkerConfig} in milliseconds. */
    public static final class Worker {
        private static final WorkerConfig D = WorkerConfig.defaults();
        public int virtualNodes = D.virtualNodes();
        public int batchSize = D.batchSize();
        public int concurrency = D.concurrency();
        public int rangesPerQuery = D.rangesPerQuery();
        public long pollIntervalMs = D.pollInterval().toMillis();
        public long leaseMs = D.lease().toMillis();
        public long handlerTimeoutMs = D.handlerTimeout().toMillis();
        public long retryBackoffMs = D.retryBackoff().toMillis();
        public long maxRetryBackoffMs = D.maxRetryBackoff().toMillis();
        public long reapIntervalMs = D.reapInterval().toMillis();
        public long backlogIntervalMs = D.backlogInterval().toMillis();
        public long doneRetentionMs = D.doneRetention().toMillis();
        public long purgeIntervalMs = D.purgeInterval().toMillis();
        public long shutdownTimeoutMs = D.shutdownTimeout().toMillis();

        WorkerConfig toConfig() {
            return new WorkerConfig(
                    virtualNodes,
                    batchSize,
                    concurrency,
                    rangesPerQuery,
                    Duration.ofMillis(pollIntervalMs),
                    Duration.ofMillis(leaseMs),
                    Duration.ofMillis(handlerTimeoutMs),
                    Duration.ofMillis(retryBackoffMs),
                    Duration.ofMillis(maxRetryBackoffMs),
                    Duration.ofMillis(reapIntervalMs),
                    Duration.ofMillis(backlogIntervalMs),
                    Duration.ofMillis(doneRetentionMs),
                    Duration.ofMillis(purgeIntervalMs),
                    Duration.ofMillis(shutdownTimeoutMs));
        }
    }

    static final String ZOOKEEPER_AUTH = "zookeeper.auth";

    /** The ZooKeeper identity ({@code zookeeper.auth}), validated by {@link #load}. */
    ZkAuth zooKeeperAuth() {
        try {
            return ZkAuth.of(zookeeper.auth);
        } catch (PidPoolException e) {
            // the SDK's message, with the environment variable a worker operator may have used
            throw PidPoolException.invalid(
                    ZOOKEEPER_AUTH,
                    "%s (or PIDPOOL_ZOOKEEPER_AUTH) must be user:password (ZooKeeper digest): a non-empty user"
                            + " without whitespace, a colon, a non-empty password",
                    ZOOKEEPER_AUTH);
        }
    }

    /** The worker settings, validated. */
    public WorkerConfig workerConfig() {
        return worker.toConfig();
    }

    /** Reads {@code file} (YAML) over the defaults, then the {@code PIDPOOL_*} variables of {@code env}. */
    public static WorkerFileConfig load(Path file, Map<String, String> env) {
        ObjectMapper yaml =
                new ObjectMapper(new YAMLFactory()).enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        ObjectNode tree = yaml.valueToTree(new WorkerFileConfig());
        try {
            JsonNode fromFile = yaml.readTree(Files.readString(file));
            if (fromFile != null && !fromFile.isMissingNode() && !fromFile.isNull()) {
                if (!fromFile.isObject()) {
                    throw PidPoolException.invalid("config", "%s must be a YAML mapping", file);
                }
                merge(tree, (ObjectNode) fromFile, "");
            }
        } catch (IOException e) {
            throw PidPoolException.invalid("config", "cannot read %s: %s", file, e.getMessage());
        }
        applyEnv(tree, "PIDPOOL", env);
        WorkerFileConfig config;
        try {
            config = yaml.treeToValue(tree, WorkerFileConfig.class);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw PidPoolException.invalid("config", "bad value in %s: %s", file, e.getOriginalMessage());
        }
        if (config.database.url == null || config.database.url.isBlank()) {
            throw PidPoolException.invalid("database.url", "database.url is required (or PIDPOOL_DATABASE_URL)");
        }
        if (config.instances < 1 || config.instances > 64) {
            throw PidPoolException.invalid("instances", "instances must be in 1..64, was %d", config.instances);
        }
        config.zooKeeperAuth(); // the format, before anything connects; the message never repeats the value
        return config;
    }

    private static void merge(ObjectNode into, ObjectNode from, String path) {
        for (Iterator<Map.Entry<String, JsonNode>> it = from.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
            JsonNode existing = into.get(e.getKey());
            if (existing == null) {
                throw PidPoolException.invalid(key, "unknown config key '%s'", key);
            }
            if (existing.isObject()) {
                if (!e.getValue().isObject()) {
                    throw PidPoolException.invalid(key, "config key '%s' must be a mapping", key);
                }
                merge((ObjectNode) existing, (ObjectNode) e.getValue(), key);
            } else {
                into.set(e.getKey(), e.getValue());
            }
        }
    }

    /**
     * One warning per {@code PIDPOOL_*} variable of {@code env} that names no key of this file (a
     * typo would otherwise leave the key at its default without a word); see {@link UnknownVariables}.
     */
    public static List<String> unknownVariableWarnings(Map<String, String> env) {
        Map<String, String> known = new java.util.HashMap<>();
        variables(new ObjectMapper().valueToTree(new WorkerFileConfig()), "PIDPOOL", "", known);
        return UnknownVariables.warnings(env, known);
    }

    /** Every variable {@link #applyEnv} reads below {@code node}, with its key. */
    private static void variables(JsonNode node, String prefix, String path, Map<String, String> into) {
        node.fieldNames().forEachRemaining(name -> {
            String var =
                    prefix + "_" + name.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
            String key = path.isEmpty() ? name : path + "." + name;
            JsonNode child = node.get(name);
            if (child.isObject()) {
                variables(child, var, key, into);
            } else {
                into.put(var, key);
            }
        });
    }

    private static void applyEnv(ObjectNode node, String prefix, Map<String, String> env) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        for (String name : names) {
            String var =
                    prefix + "_" + name.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
            JsonNode child = node.get(name);
            if (child.isObject()) {
                applyEnv((ObjectNode) child, var, env);
            } else if (env.containsKey(var)) {
                node.set(name, TextNode.valueOf(env.get(var)));
            }
        }
    }
}
