package io.pidpool.worker.runtime;

import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.worker.task.JdbiTaskStore;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskSchema;
import io.pidpool.worker.task.TaskStatus;
import io.pidpool.worker.task.TaskStore;
import io.pidpool.worker.task.TestDatabase;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;

/**
 * Test harness: several {@link WorkerPool}s on one task table and one ZooKeeper, each with its own
 * ZooKeeper connection through a {@link TcpProxy} and its own {@link CuttableDataSource}, so a test
 * can kill one the way a crash looks from outside (session expires after T, database gone).
 * Handlers record every execution and apply an idempotent effect: {@code key -> amount}.
 */
final class WorkerCluster implements AutoCloseable {
    static final String GROUP = "ring";
    static final String TYPE = "ledger.apply";

    record Execution(long taskId, String member, String worker, long slot, long nanos) {}

    final class Member {
        final String name;
        final TcpProxy zkProxy;
        final CuratorFramework client;
        final CuttableDataSource ds;
        final CountingWorkerMetrics metrics = new CountingWorkerMetrics();
        final WorkerPool pool;

        Member(String name, Map<String, Function<Member, TaskHandler>> handlers) throws Exception {
            this.name = name;
            this.zkProxy = new TcpProxy("127.0.0.1", zk.port()).start();
            this.client = zk.client(zkProxy.port());
            this.ds = new CuttableDataSource(db.dataSource());
            WorkerPool.Builder b = WorkerPool.builder()
                    .curator(client)
                    .cluster("it")
                    .group(GROUP)
                    .dataSource(ds.dataSource())
                    .migrateSchema(false);
            handlers.forEach((type, handler) -> b.handler(type, handler.apply(this)));
            this.pool = b.config(config).metrics(metrics).host(name).build();
        }

        /** Dies as seen from outside: ZooKeeper connection and database gone, no graceful exit. */
        void kill() {
            zkProxy.stop();
            ds.cut();
        }

        boolean sees(int members) {
            return pool.ring().members().size() == members && pool.ring().contains(pool.memberId());
        }
    }

    final ZooKeeperFixture zk;
    final TestDatabase db;
    final WorkerConfig config;
    final TaskStore store;
    final Map<String, Member> members = new LinkedHashMap<>();
    final ConcurrentLinkedQueue<Execution> executions = new ConcurrentLinkedQueue<>();
    final Map<String, Long> effect = new ConcurrentHashMap<>();
    final Map<String, Long> expected = new LinkedHashMap<>();
    volatile Duration work = Duration.ofMillis(2);

    WorkerCluster(ZooKeeperFixture zk, TestDatabase db, WorkerConfig config) {
        this.zk = zk;
        this.db = db;
        this.config = config;
        TaskSchema.migrate(db.directDataSource());
        this.store = JdbiTaskStore.create(db.directDataSource());
    }

    /** The default handler: simulated work, then record and apply the idempotent effect. */
    TaskHandler recordingHandler(Member m) {
        return task -> {
            LockSupport.parkNanos(work.toNanos());
            executions.add(new Execution(task.id(), m.name, m.pool.memberId(), task.slot(), System.nanoTime()));
            effect.putIfAbsent(task.key(), amountOf(task));
        };
    }

    Member start(String name) throws Exception {
        return start(name, this::recordingHandler);
    }

    Member start(String name, Function<Member, TaskHandler> handler) throws Exception {
        return start(name, Map.of(TYPE, handler));
    }

    /** A member with the recording handler for each of {@code types} (and nothing else). */
    Member start(String name, Set<String> types) throws Exception {
        Map<String, Function<Member, TaskHandler>> handlers = new LinkedHashMap<>();
        types.forEach(t -> handlers.put(t, this::recordingHandler));
        return start(name, handlers);
    }

    Member start(String name, Map<String, Function<Member, TaskHandler>> handlers) throws Exception {
        Member m = new Member(name, handlers);
        members.put(name, m);
        m.pool.start();
        return m;
    }

    boolean allLiveSee(int n) {
        return members.values().stream().filter(m -> !m.ds.isCut()).allMatch(m -> m.sees(n));
    }

    void enqueue(int count) {
        List<NewTask> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String key = "acct-" + i;
            long amount = i % 97 + 1;
            expected.put(key, amount);
            batch.add(
                    NewTask.of(GROUP, TYPE, key, "{\"amount\":" + amount + "}").withMaxAttempts(10));
            if (batch.size() == 1000) {
                store.enqueueAll(batch, Clock.systemUTC().instant());
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            store.enqueueAll(batch, Clock.systemUTC().instant());
        }
    }

    long done() {
        return store.countByStatus(GROUP).getOrDefault(TaskStatus.DONE, 0L);
    }

    /** Executions per task id. */
    Map<Long, List<Execution>> byTask() {
        Map<Long, List<Execution>> out = new LinkedHashMap<>();
        executions.forEach(
                e -> out.computeIfAbsent(e.taskId(), id -> new ArrayList<>()).add(e));
        return out;
    }

    long duplicates() {
        return executions.size() - byTask().size();
    }

    ConsistentHashRing ring() {
        return members.values().iterator().next().pool.ring();
    }

    static long amountOf(Task task) {
        String b = task.body();
        return Long.parseLong(b.substring(b.indexOf(':') + 1, b.indexOf('}')));
    }

    @Override
    public void close() {
        for (Member m : members.values()) {
            if (m.ds.isCut()) {
                m.client.close(); // a dead member cannot leave the ring politely
                m.ds.restore(); // ... but may write its stale outcomes (fenced by the claim id) and exit
            }
            m.pool.close();
            m.client.close();
            m.zkProxy.close();
        }
        db.close();
    }
}
