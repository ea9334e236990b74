package io.pidpool.server.runtime;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.pidpool.server.http.HealthCheck.Component;
import io.pidpool.server.http.HealthCheck.Status;
import io.pidpool.server.http.HttpApi;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process and infrastructure meters on {@code /metrics}, beside the {@code pidpool_*} usage and
 * server series of {@code UsageMetrics} (same registry):
 *
 * <ul>
 *   <li>JVM and process: Micrometer's standard binders ({@code jvm_*}, {@code process_*}, {@code
 *       system_*}), as every JVM service exports them, so stock dashboards work;
 *   <li>HTTP: {@code http_server_requests_seconds} {method, route, status}, the route being the
 *       matched template ({@code /api/v1/modules/{module}}), never the raw path, so the series stay
 *       few; buckets for latency quantiles up to the two-minute {@code ?wait=true};
 *   <li>ZooKeeper: {@code pidpool_zookeeper_connected} and {@code
 *       pidpool_zookeeper_connection_state_changes_total} {state} from Curator's connection state;
 *   <li>database: HikariCP's own Micrometer tracker ({@code hikaricp_connections_*});
 *   <li>Redis, database, ZooKeeper probes: {@code pidpool_health_up} {component} and {@code
 *       pidpool_health_probe_seconds} {component} (the Redis probe is one round trip, so this is the
 *       Redis latency as the server sees it). Redisson's own connection-pool metrics are a part of
 *       its commercial edition only.
 * </ul>
 */
final class ServerMetrics {
    private static final Logger log = LoggerFactory.getLogger(ServerMetrics.class);

    private ServerMetrics() {}

    /** Binds the JVM and process meters; the returned handle stops the GC listener. */
    static AutoCloseable bindJvm(MeterRegistry registry) {
        new ClassLoaderMetrics().bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new JvmInfoMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        return gc;
    }

    /**
     * Curator's connection state as meters, and as one log line per change (the ZooKeeper client's
     * own per-retry warnings with stack traces are silenced in logback.xml).
     */
    static void bindZooKeeper(MeterRegistry registry, CuratorFramework curator, String connect) {
        AtomicInteger connected = new AtomicInteger(curator.getZookeeperClient().isConnected() ? 1 : 0);
        Gauge.builder("pidpool.zookeeper.connected", connected, AtomicInteger::get)
                .description("1 while this server's ZooKeeper client is connected")
                .register(registry);
        Map<ConnectionState, Counter> changes = new LinkedHashMap<>();
        for (ConnectionState state : ConnectionState.values()) {
            changes.put(
                    state,
                    Counter.builder("pidpool.zookeeper.connection.state.changes")
                            .description("Curator connection state changes, by the new state")
                            .tag("state", state.name())
                            .register(registry));
        }
        ConnectionStateListener listener = (client, state) -> {
            connected.set(state.isConnected() ? 1 : 0);
            changes.get(state).increment();
            if (state.isConnected()) {
                log.info("ZooKeeper {}: {}", connect, state);
            } else {
                log.warn("ZooKeeper {}: {}", connect, state);
            }
        };
        curator.getConnectionStateListenable().addListener(listener);
    }

    /** Times each probe and exports each component's last status. */
    static Map<String, Supplier<Component>> timedProbes(
            MeterRegistry registry, Map<String, Supplier<Component>> probes, Supplier<HealthMonitor> monitor) {
        Map<String, Supplier<Component>> timed = new LinkedHashMap<>();
        probes.forEach((name, probe) -> {
            Timer timer = Timer.builder("pidpool.health.probe")
                    .description("how long a health probe took (Redis: one round trip)")
                    .tag("component", name)
                    .register(registry);
            Gauge.builder("pidpool.health.up", () -> {
                        HealthMonitor m = monitor.get();
                        Component c = m == null ? null : m.report().components().get(name);
                        return c == null ? Double.NaN : (c.status() == Status.UP ? 1 : 0);
                    })
                    .description("1 if the last health probe of the component succeeded")
                    .tag("component", name)
                    .register(registry);
            timed.put(name, () -> {
                long start = System.nanoTime();
                try {
                    return probe.get();
                } finally {
                    timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                }
            });
        });
        return timed;
    }

    /** Latency and status per HTTP route. */
    static HttpApi.RequestObserver http(MeterRegistry registry) {
        Duration[] buckets = {
            Duration.ofMillis(5),
            Duration.ofMillis(10),
            Duration.ofMillis(25),
            Duration.ofMillis(50),
            Duration.ofMillis(100),
            Duration.ofMillis(250),
            Duration.ofMillis(500),
            Duration.ofSeconds(1),
            Duration.ofMillis(2500),
            Duration.ofSeconds(5),
            Duration.ofSeconds(10),
            Duration.ofSeconds(30),
            Duration.ofSeconds(120)
        };
        return (method, route, status, nanos) -> Timer.builder("http.server.requests")
                .description("HTTP requests by method, route template and status")
                .tag("method", method)
                .tag("route", route)
                .tag("status", Integer.toString(status))
                .serviceLevelObjectives(buckets)
                .register(registry)
                .record(nanos, TimeUnit.NANOSECONDS);
    }
}
