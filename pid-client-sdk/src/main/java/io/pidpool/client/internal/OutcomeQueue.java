package io.pidpool.client.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Callback outcomes on their way from the callback threads to the state thread, applied in bursts:
 * the outcomes that arrive while one drain task is queued are applied by that task, in arrival order,
 * and logged in one line per kind ("Assigned 50 PIDs: ..."), not one task and one line per PID. A
 * hand-out of 50 PIDs to a client thus costs its state thread a few wake-ups instead of 50, and the
 * application's log (whose appender is shared by every client in the JVM) a few lines.
 *
 * <p>Applying an outcome earlier than a state task queued before it arrived is no new order: the
 * outcome could have arrived before that task just as well (callbacks and ZooKeeper events are not
 * ordered with each other).
 *
 * <p>Concurrency: {@link #done} on any thread; the drain on the state thread.
 */
final class OutcomeQueue implements ListenerDispatch.Results {
    private static final Logger log = LoggerFactory.getLogger(OutcomeQueue.class);

    /** PIDs named per log line at most: a burst of thousands becomes several lines, none huge. */
    static final int IDS_PER_LINE = 100;

    private record Done(String pid, Outcome outcome) {}

    /** One kind of log line: the verb, and for revocations their reason. */
    private record Line(String verb, String why) {}

    private final Consumer<Runnable> toStateThread;
    private final BiConsumer<String, Outcome> apply;
    private final Queue<Done> queue = new ConcurrentLinkedQueue<>();
    /** Whether a drain task is queued and has not started draining yet. */
    private final AtomicBoolean posted = new AtomicBoolean();

    /**
     * @param toStateThread queues a task on the state thread
     * @param apply applies one outcome (state thread)
     */
    OutcomeQueue(Consumer<Runnable> toStateThread, BiConsumer<String, Outcome> apply) {
        this.toStateThread = toStateThread;
        this.apply = apply;
    }

    @Override
    public void done(String pid, Outcome outcome) {
        queue.add(new Done(pid, outcome));
        if (posted.compareAndSet(false, true)) {
            toStateThread.accept(this::drain);
        }
    }

    private void drain() {
        posted.set(false); // an outcome queued from now on posts another drain
        Map<Line, List<String>> lines = new LinkedHashMap<>();
        Done done;
        while ((done = queue.poll()) != null) {
            try {
                apply.accept(done.pid(), done.outcome());
            } catch (RuntimeException e) {
                // as when each outcome was its own task: one that fails does not hold up the others
                log.error("PID {}: applying the callback outcome {} failed", done.pid(), done.outcome(), e);
                continue;
            }
            Line line = line(done.outcome());
            if (line != null) {
                lines.computeIfAbsent(line, k -> new ArrayList<>()).add(done.pid());
            }
        }
        if (log.isInfoEnabled()) {
            lines.forEach(OutcomeQueue::logBurst);
        }
    }

    /** The line an outcome is logged under; failures are logged where they happen, one by one. */
    private static Line line(Outcome outcome) {
        if (outcome instanceof Outcome.Assigned) {
            return new Line("Assigned", null);
        } else if (outcome instanceof Outcome.Updated) {
            return new Line("Updated", null);
        } else if (outcome instanceof Outcome.Revoked revoked) {
            return new Line("Revoked", revoked.why());
        }
        return null;
    }

    private static void logBurst(Line line, List<String> pids) {
        for (int from = 0; from < pids.size(); from += IDS_PER_LINE) {
            List<String> part = pids.subList(from, Math.min(pids.size(), from + IDS_PER_LINE));
            String count = pids.size() == 1 ? "1 PID" : pids.size() + " PIDs";
            if (pids.size() > IDS_PER_LINE) {
                count += String.format(" (%d-%d)", from + 1, from + part.size());
            }
            String why = line.why() == null || line.why().isEmpty() ? "" : " (" + line.why() + ")";
            log.info("{} {}{}: {}", line.verb(), count, why, String.join(", ", part));
        }
    }
}
