package io.pidpool.server.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.Severity;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.server.config.AdviceConfig;
import io.pidpool.server.jdbc.Database;
import io.pidpool.worker.ring.StaticRingMembership;
import io.pidpool.worker.runtime.WorkerConfig;
import io.pidpool.worker.runtime.WorkerPool;
import io.pidpool.worker.task.JdbiTaskStore;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskStatus;
import io.pidpool.worker.task.TaskStore;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The webhook for real: alerts stored in H2, notifications as pid-worker tasks in the same database,
 * a real {@link WorkerPool} running them, and a JDK {@link HttpServer} on loopback as the receiver.
 */
class WebhookIT {
    static final Duration WAIT = Duration.ofSeconds(60);

    /** One request the receiver got. */
    record Call(String delivery, String body, int answered) {}

    final List<Call> calls = new CopyOnWriteArrayList<>();
    final AtomicInteger failFirst = new AtomicInteger();
    final AtomicLong ids = new AtomicLong(1_000);
    final Clock clock = Clock.systemUTC();
    Database db;
    HttpServer receiver;
    WorkerPool workers;
    AdviceSetup setup;
    TaskStore tasks;

    @BeforeEach
    void openDatabase() {
        db = Database.open("jdbc:h2:mem:webhook" + System.nanoTime() + ";DB_CLOSE_DELAY=-1", "sa", "");
    }

    @AfterEach
    void close() {
        if (workers != null) {
            workers.close();
        }
        if (setup != null) {
            setup.close();
        }
        if (receiver != null) {
            receiver.stop(0);
        }
        db.close();
    }

    void startReceiver(int port) throws IOException {
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        receiver.createContext("/hook", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            int status = failFirst.getAndDecrement() > 0 ? 503 : 204;
            calls.add(new Call(exchange.getRequestHeaders().getFirst(WebhookTasks.DELIVERY_HEADER), body, status));
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
        });
        receiver.start();
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    void startServerSide(int port) {
        AdviceConfig defaults = AdviceConfig.defaults();
        AdviceConfig config = new AdviceConfig(
                defaults.evaluateIntervalMs(),
                defaults.utilisationPercents(),
                defaults.pidUtilisation(),
                defaults.projectedCostAbove(),
                defaults.maxPidAlerts(),
                defaults.cooldownAfterFailures(),
                defaults.cooldownMs(),
                defaults.massFailureShare(),
                defaults.tariff(),
                new AdviceConfig.WebhookConfig("http://127.0.0.1:" + port + "/hook", 20, 2_000),
                defaults.recommendations(),
                defaults.autoApply());
        setup = new AdviceSetup(config, "blue", db.alerts(), db.dataSource(), "default", ids::incrementAndGet, clock);
        tasks = JdbiTaskStore.create(db.dataSource());
        Map<String, TaskHandler> handlers = new HashMap<>();
        setup.registerHandlers(handlers);
        assertThat(handlers).containsKey(WebhookTasks.TYPE);
        workers = WorkerPool.builder()
                .cluster("blue")
                .group("default")
                .taskStore(tasks)
                .membership(StaticRingMembership.alone("w1"))
                .handlers(handlers)
                .config(WorkerConfig.builder()
                        .pollInterval(Duration.ofMillis(50))
                        .retryBackoff(Duration.ofMillis(100))
                        .maxRetryBackoff(Duration.ofMillis(400))
                        .build())
                .build()
                .start();
    }

    static Alert overage(String module) {
        return new Alert(
                "PROJECTED_OVERAGE:" + module,
                AlertKind.PROJECTED_OVERAGE,
                Severity.WARNING,
                module,
                "module " + module + " is projected to cost 42.00",
                Clock.systemUTC().instant());
    }

    long done() {
        return tasks.countByStatus("default").getOrDefault(TaskStatus.DONE, 0L);
    }

    @Test
    void aReceiverThatFailsTheFirstCallsGetsEachNotificationDeliveredExactlyOnce() throws Exception {
        int port = freePort();
        startReceiver(port);
        failFirst.set(3);
        startServerSide(port);

        StoredAlert raised = setup.alerts().raise(overage("fin#risk#scorer")).alert();
        setup.alerts().raise(overage("fin#risk#scorer")); // a repeat: no second notification
        await().atMost(WAIT).until(() -> done() == 1);

        List<Call> answered = calls.stream().filter(c -> c.answered() == 204).toList();
        assertThat(answered).hasSize(1);
        assertThat(calls).hasSize(4).allMatch(c -> c.delivery().equals("alert:" + raised.id() + ":raised"));
        JsonNode body = WebhookTasks.JSON.readTree(answered.get(0).body());
        assertThat(body.get("event").asText()).isEqualTo("RAISED");
        assertThat(body.get("cluster").asText()).isEqualTo("blue");
        assertThat(body.get("alert").get("key").asText()).isEqualTo("PROJECTED_OVERAGE:fin#risk#scorer");
        assertThat(body.get("alert").get("state").asText()).isEqualTo("OPEN");

        setup.alerts().resolve("PROJECTED_OVERAGE:fin#risk#scorer");
        await().atMost(WAIT).until(() -> done() == 2);
        assertThat(calls).hasSize(5);
        assertThat(calls.get(4).delivery()).isEqualTo("alert:" + raised.id() + ":resolved");
        assertThat(WebhookTasks.JSON
                        .readTree(calls.get(4).body())
                        .get("alert")
                        .get("state")
                        .asText())
                .isEqualTo("RESOLVED");
        // nothing more arrives once both are done
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> calls.size() == 5);
    }

    @Test
    void whileTheReceiverIsDownTheNotificationIsRetriedAndArrivesOnceItIsBack() throws Exception {
        int port = freePort();
        startServerSide(port);
        StoredAlert raised =
                setup.alerts().raise(overage("ops#monitor#collector")).alert();
        // the task the alert service enqueued: the only one of the group
        await().atMost(WAIT)
                .until(() -> tasks.countByStatus("default").values().stream()
                                .mapToLong(Long::longValue)
                                .sum()
                        == 1);
        Task task = findOnlyTask();
        await().atMost(WAIT).until(() -> tasks.find(task.id()).orElseThrow().attempts() >= 3);
        assertThat(tasks.find(task.id()).orElseThrow().status()).isNotEqualTo(TaskStatus.DONE);
        assertThat(tasks.find(task.id()).orElseThrow().lastError()).contains("not reachable");

        startReceiver(port);
        await().atMost(WAIT).until(() -> tasks.find(task.id()).orElseThrow().status() == TaskStatus.DONE);
        assertThat(calls).singleElement().satisfies(c -> {
            assertThat(c.answered()).isEqualTo(204);
            assertThat(c.delivery()).isEqualTo("alert:" + raised.id() + ":raised");
        });
    }

    private Task findOnlyTask() {
        // ids are assigned by the task table; scan the few there are
        for (long id = 1; id < 1_000; id++) {
            var task = tasks.find(id);
            if (task.isPresent() && task.get().type().equals(WebhookTasks.TYPE)) {
                return task.get();
            }
        }
        throw new AssertionError("no webhook task found");
    }
}
