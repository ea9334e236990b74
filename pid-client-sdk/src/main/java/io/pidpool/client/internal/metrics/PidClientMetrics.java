package io.pidpool.client.internal.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.pidpool.client.internal.ClientObserver;
import io.pidpool.client.internal.RevokeCause;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@code PidClient}'s meters, tagged {@code module} (the client's module) and {@code client} (a
 * number per client in this JVM, so that two clients never share a gauge):
 *
 * <table>
 *   <caption>meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@code pidpool.client.held.pids}</td><td>gauge</td><td></td><td>PIDs {@code heldPids()}
 *       answers right now</td></tr>
 *   <tr><td>{@code pidpool.client.lease.margin}</td><td>gauge, seconds</td><td></td><td>time until
 *       the lease runs out (0 when it has: nothing is held then)</td></tr>
 *   <tr><td>{@code pidpool.client.revocations}</td><td>counter</td><td>{@code cause}: leader, session,
 *       close, deadline, unreadable</td><td>revocations ({@code onRevoked} calls)</td></tr>
 *   <tr><td>{@code pidpool.client.callback.duration}</td><td>timer</td><td>{@code callback}:
 *       onAssigned, onUpdated, onRevoked; {@code outcome}: ok, failed</td><td>how long the listener
 *       took</td></tr>
 *   <tr><td>{@code pidpool.client.permits}</td><td>counter</td><td>{@code result}: granted, denied,
 *       error</td><td>{@code tryAcquire} answers</td></tr>
 *   <tr><td>{@code pidpool.client.refunds}</td><td>counter</td><td>{@code outcome}: applied, repeated,
 *       rejected, error</td><td>{@code refund} outcomes</td></tr>
 * </table>
 *
 * <p>Counters and timers are registered when the client is bound, so every series exists (at 0)
 * from the start; all meters are removed from the registry when the client closes.
 *
 * <p>Thread-safe: Micrometer's meters are; the observer is called from the client's threads.
 */
public final class PidClientMetrics implements ClientObserver {
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final MeterRegistry registry;
    private final String client = Integer.toString(CLIENTS.incrementAndGet());
    private final List<Meter> meters = new ArrayList<>();
    private volatile Map<RevokeCause, Counter> revocations;
    private volatile Map<Callback, Timer> callbacksOk;
    private volatile Map<Callback, Timer> callbacksFailed;
    private volatile Counter granted;
    private volatile Counter denied;
    private volatile Counter permitErrors;
    private volatile Map<RefundOutcome, Counter> refunds;

    private PidClientMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** An observer that records into {@code registry} once the client starts. */
    public static ClientObserver observer(MeterRegistry registry) {
        return new PidClientMetrics(registry);
    }

    @Override
    public synchronized void started(String module, Gauges gauges) {
        Tags tags = Tags.of("module", module, "client", client);
        meters.add(Gauge.builder("pidpool.client.held.pids", gauges, Gauges::heldPids)
                .description("PIDs this client holds right now")
                .tags(tags)
                .strongReference(true) // removed on close; a weak reference would read NaN after a GC
                .register(registry));
        meters.add(Gauge.builder("pidpool.client.lease.margin", gauges, Gauges::leaseMarginSeconds)
                .description("time until the lease runs out; 0 when it has")
                .baseUnit("seconds")
                .tags(tags)
                .strongReference(true)
                .register(registry));
        Map<RevokeCause, Counter> byCause = new EnumMap<>(RevokeCause.class);
        for (RevokeCause cause : RevokeCause.values()) {
            byCause.put(
                    cause,
                    keep(Counter.builder("pidpool.client.revocations")
                            .description("PIDs revoked (onRevoked called), by cause")
                            .tags(tags.and("cause", cause.tag()))
                            .register(registry)));
        }
        Map<Callback, Timer> ok = new EnumMap<>(Callback.class);
        Map<Callback, Timer> failed = new EnumMap<>(Callback.class);
        for (Callback callback : Callback.values()) {
            ok.put(callback, keep(callbackTimer(tags, callback, "ok")));
            failed.put(callback, keep(callbackTimer(tags, callback, "failed")));
        }
        Map<RefundOutcome, Counter> byOutcome = new EnumMap<>(RefundOutcome.class);
        for (RefundOutcome outcome : RefundOutcome.values()) {
            byOutcome.put(
                    outcome,
                    keep(Counter.builder("pidpool.client.refunds")
                            .description("refund outcomes")
                            .tags(tags.and("outcome", outcome.name().toLowerCase(java.util.Locale.ROOT)))
                            .register(registry)));
        }
        granted = keep(permitCounter(tags, "granted"));
        denied = keep(permitCounter(tags, "denied"));
        permitErrors = keep(permitCounter(tags, "error"));
        revocations = byCause;
        callbacksOk = ok;
        callbacksFailed = failed;
        refunds = byOutcome;
    }

    @Override
    public void callback(Callback callback, boolean ok, long nanos) {
        Map<Callback, Timer> timers = ok ? callbacksOk : callbacksFailed;
        if (timers != null) {
            timers.get(callback).record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void revoked(RevokeCause cause) {
        Map<RevokeCause, Counter> counters = revocations;
        if (counters != null) {
            counters.get(cause).increment();
        }
    }

    @Override
    public void permit(boolean wasGranted) {
        Counter c = wasGranted ? granted : denied;
        if (c != null) {
            c.increment();
        }
    }

    @Override
    public void permitError() {
        if (permitErrors != null) {
            permitErrors.increment();
        }
    }

    @Override
    public void refund(RefundOutcome outcome) {
        Map<RefundOutcome, Counter> counters = refunds;
        if (counters != null) {
            counters.get(outcome).increment();
        }
    }

    @Override
    public synchronized void closed() {
        meters.forEach(registry::remove);
        meters.clear();
    }

    private Timer callbackTimer(Tags tags, Callback callback, String outcome) {
        return Timer.builder("pidpool.client.callback.duration")
                .description("how long the listener's callbacks took")
                .tags(tags.and("callback", callback.tag(), "outcome", outcome))
                .register(registry);
    }

    private Counter permitCounter(Tags tags, String result) {
        return Counter.builder("pidpool.client.permits")
                .description("tryAcquire answers: granted, denied (empty) or error")
                .tags(tags.and("result", result))
                .register(registry);
    }

    private <M extends Meter> M keep(M meter) {
        meters.add(meter);
        return meter;
    }
}
