package io.pidpool.core.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * The clock, the event queue and the dice of one simulated schedule: virtual nanoseconds, events
 * ordered by (time, sequence), and ONE seeded {@link RandomGenerator} from which every choice of the
 * schedule derives. Nothing else in a simulation may read a clock or a random source, so a seed
 * replays exactly.
 *
 * <p>Processes: an event may belong to a {@link Proc}. While the process is paused its events wait
 * (in their order) until the pause ends; once it has died, the events of that incarnation are
 * dropped. That is how a GC pause, SIGSTOP or a crash looks from the inside.
 *
 * <p>Every event that runs leaves one trace line (time, actor, what); the trace's hash identifies
 * the schedule (same seed, same hash). The last {@link #KEPT_LINES} lines are kept for a failure
 * report, all of them when {@link #keepAll} is set.
 *
 * <p>Concurrency: single-threaded by design.
 */
public final class SimScheduler {
    public static final int KEPT_LINES = 4000;

    /** One simulated process (server or client JVM). */
    public static final class Proc {
        final String name;
        int incarnation;
        boolean alive = true;
        long pausedUntil;

        public Proc(String name) {
            this.name = name;
        }

        public String name() {
            return name;
        }

        public boolean alive() {
            return alive;
        }

        public boolean paused(long now) {
            return pausedUntil - now > 0;
        }
    }

    /** A scheduled event; {@link #cancel()} makes it a no-op. */
    public static final class Event implements Comparable<Event> {
        long time;
        long seq;
        final Proc owner;
        final int incarnation;
        final String what;
        final Runnable task;
        boolean cancelled;

        Event(long time, long seq, Proc owner, String what, Runnable task) {
            this.time = time;
            this.seq = seq;
            this.owner = owner;
            this.incarnation = owner == null ? 0 : owner.incarnation;
            this.what = what;
            this.task = task;
        }

        public void cancel() {
            cancelled = true;
        }

        @Override
        public int compareTo(Event o) {
            int byTime = Long.compare(time, o.time);
            return byTime != 0 ? byTime : Long.compare(seq, o.seq);
        }
    }

    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final RandomGenerator random;
    private final long seed;
    private final Deque<String> lines = new ArrayDeque<>();
    private long now;
    private long seq;
    private long events;
    private long hash = 1125899906842597L;
    private boolean keepAll;
    private final List<String> notes = new ArrayList<>();

    public SimScheduler(long seed) {
        this.seed = seed;
        this.random = new SplittableRandom(seed);
    }

    public long seed() {
        return seed;
    }

    public long now() {
        return now;
    }

    public RandomGenerator random() {
        return random;
    }

    /** Uniform in [min, max]. */
    public long between(long min, long max) {
        return max <= min ? min : min + random.nextLong(max - min + 1);
    }

    public boolean chance(double p) {
        return random.nextDouble() < p;
    }

    public void keepAll(boolean value) {
        keepAll = value;
    }

    public Event at(long time, Proc owner, String what, Runnable task) {
        Event e = new Event(Math.max(time, now), seq++, owner, what, task);
        queue.add(e);
        return e;
    }

    public Event after(long delay, Proc owner, String what, Runnable task) {
        return at(now + Math.max(0, delay), owner, what, task);
    }

    /** Pauses {@code p} until {@code until} (a longer pause wins). */
    public void pause(Proc p, long until) {
        if (until - p.pausedUntil > 0) {
            p.pausedUntil = until;
        }
    }

    /** Ends the current incarnation of {@code p}: its pending events are dropped. */
    public void kill(Proc p) {
        p.alive = false;
        p.incarnation++;
    }

    /** Brings {@code p} back as a new incarnation (nothing of the old one runs). */
    public void revive(Proc p) {
        p.alive = true;
        p.incarnation++;
        p.pausedUntil = now;
    }

    /** Runs events up to and including {@code end}; the clock then stands at {@code end}. */
    public void runUntil(long end) {
        while (!queue.isEmpty() && queue.peek().time <= end) {
            Event e = queue.poll();
            if (e.cancelled) {
                continue;
            }
            now = e.time;
            if (e.owner != null) {
                if (!e.owner.alive || e.owner.incarnation != e.incarnation) {
                    continue;
                }
                if (e.owner.paused(now)) {
                    e.time = e.owner.pausedUntil;
                    e.seq = seq++;
                    queue.add(e);
                    continue;
                }
            }
            events++;
            trace(e.owner == null ? "-" : e.owner.name, e.what);
            e.task.run();
        }
        now = Math.max(now, end);
    }

    /** One trace line at the current time. */
    public void trace(String actor, String what) {
        hash = hash * 31 + now;
        hash = hash * 31 + actor.hashCode();
        hash = hash * 31 + what.hashCode();
        String line = fmt(now) + " " + actor + " " + what;
        lines.addLast(line);
        if (!keepAll && lines.size() > KEPT_LINES) {
            lines.removeFirst();
        }
    }

    /** A finding or fault worth listing in a report (kept apart from the trace). */
    public void note(String text) {
        notes.add(fmt(now) + " " + text);
        trace("sim", text);
    }

    public List<String> notes() {
        return notes;
    }

    public long traceHash() {
        return hash;
    }

    public long events() {
        return events;
    }

    public List<String> traceLines() {
        return List.copyOf(lines);
    }

    /** Virtual time as seconds with microseconds. */
    public static String fmt(long nanos) {
        long micros = nanos / 1000;
        return String.format("%d.%06d", micros / 1_000_000, micros % 1_000_000);
    }
}
