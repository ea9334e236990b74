package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.QuotaScripts.Script;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.quota.QuotaMonth;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.redisson.api.RedissonClient;

/**
 * The usage event log: one Redis stream per shard ({@link QuotaKeys#events}), appended by the quota
 * scripts, read by the server's ledger sync.
 *
 * <p><b>Reading.</b> A consumer reads a shard from an offset ({@link #read}, exclusive), writes the
 * events to its database idempotently (keyed by {@link UsageEvent#changeKey()}), then {@link #ack}s
 * the last offset it stored. Offsets are kept per consumer in Redis and only move forward. {@link
 * #trim} drops what every registered consumer has acknowledged; nothing else ever removes events, so
 * an event cannot vanish before every consumer has it.
 *
 * <p><b>Gaps.</b> Every event carries its client's sequence number within the shard, so a consumer
 * that tracks them ({@link ClientSequenceTracker}) notices a missing event (a skipped read, a lost
 * write of its own) and fetches it again from Redis with {@link #findBySequence} (the
 * compensation).
 *
 * <p>Thread-safe; every call is one script.
 */
public final class UsageEventLog {
    private static final Pattern OFFSET = Pattern.compile("\\d{1,20}-\\d{1,20}");
    public static final String START = "0-0";
    public static final int MAX_READ = 10_000;
    /** Kind of the stream entry that carries every deduction of one batch script run in a shard. */
    private static final String BATCH = "B";

    private final QuotaKeys keys;
    private final QuotaScripts scripts;

    UsageEventLog(QuotaKeys keys, QuotaScripts scripts) {
        this.keys = keys;
        this.scripts = scripts;
    }

    /** A reader for a server that does not deduct: its own script runner over {@code redisson}. */
    public static UsageEventLog reader(RedissonClient redisson, QuotaKeys keys) {
        QuotaScripts scripts = new QuotaScripts(requireNonNull(redisson, "redisson"));
        scripts.loadAll();
        return new UsageEventLog(requireNonNull(keys, "keys"), scripts);
    }

    public QuotaKeys keys() {
        return keys;
    }

    /**
     * The events of up to {@code max} stream entries of {@code shard} after {@code afterOffset} ({@link
     * #START} for all), oldest first. An entry is one event, except the entry of a batch of deductions
     * (the batch script writes one entry per shard and round trip), which is expanded into one event
     * per deduction, all with the entry's offset; so a read may return more than {@code max} events,
     * and a consumer that acknowledges the offset of the last event returned has all of every entry.
     */
    public List<UsageEvent> read(int shard, String afterOffset, int max) {
        keys.requireShard(shard);
        requireOffset(afterOffset, "afterOffset");
        requireArgument(max >= 1 && max <= MAX_READ, "max", "max must be within 1..%d, was %d", MAX_READ, max);
        List<Object> reply =
                scripts.run(Script.EVENTS_READ, List.of(keys.events(shard)), afterOffset, Integer.toString(max));
        List<UsageEvent> events = new ArrayList<>(reply.size());
        for (Object entry : reply) {
            decode(shard, (List<?>) entry, events);
        }
        return events;
    }

    /**
     * Records that {@code consumer} has stored everything up to {@code offset}; an offset behind the
     * recorded one changes nothing. Returns the consumer's offset after the call.
     */
    public String ack(int shard, String consumer, String offset) {
        keys.requireShard(shard);
        Names.requireToken(consumer, "consumer");
        requireOffset(offset, "offset");
        return scripts.runValue(Script.EVENTS_ACK, List.of(keys.offsets(shard)), consumer, offset);
    }

    /** The offset {@code consumer} acknowledged last in {@code shard}, or {@link #START}. */
    public String committed(int shard, String consumer) {
        keys.requireShard(shard);
        Names.requireToken(consumer, "consumer");
        Object offset = scripts.runValue(Script.EVENTS_OFFSET, List.of(keys.offsets(shard)), consumer);
        return offset instanceof String s ? s : START;
    }

    /**
     * The last sequence number each client has used in {@code shard}, and the shard's incarnation
     * (empty before the first event). A consumer that reads these <em>before</em> reading the stream to
     * its end can tell a lost last event from one not yet written: see {@link
     * ClientSequenceTracker#expectUpTo}.
     */
    public Heads heads(int shard) {
        keys.requireShard(shard);
        List<Object> reply = scripts.run(Script.EVENTS_HEADS, List.of(keys.sequences(shard)));
        String incarnation = "";
        Map<String, Long> last = new HashMap<>();
        for (int i = 0; i + 1 < reply.size(); i += 2) {
            String field = (String) reply.get(i);
            String value = (String) reply.get(i + 1);
            if (field.equals("~inc")) {
                incarnation = value;
            } else {
                last.put(field, Long.parseLong(value));
            }
        }
        return new Heads(shard, incarnation, Map.copyOf(last));
    }

    /** The sequence heads of one shard: {@code clientId -> last number used}. */
    public record Heads(int shard, String incarnation, Map<String, Long> lastByClient) {}

    /** Removes the events of {@code shard} that every registered consumer has acknowledged. */
    public long trim(int shard) {
        keys.requireShard(shard);
        Object removed = scripts.runValue(Script.EVENTS_TRIM, List.of(keys.events(shard), keys.offsets(shard)));
        return removed instanceof Long l ? l : 0;
    }

    /**
     * The events of {@code clientId} in {@code shard} with sequence numbers {@code fromSeq..toSeq}
     * (within one incarnation), scanning the stream after {@code afterOffset} in pages; stops once all
     * are found or the stream ends. Used to fill a gap a {@link ClientSequenceTracker} reported.
     */
    public List<UsageEvent> findBySequence(
            int shard, String incarnation, String clientId, long fromSeq, long toSeq, String afterOffset) {
        keys.requireShard(shard);
        requireNonNull(incarnation, "incarnation");
        Names.requireToken(clientId, "clientId");
        requireArgument(fromSeq >= 1 && fromSeq <= toSeq, "fromSeq", "need 1 <= fromSeq <= toSeq");
        Map<Long, UsageEvent> found = new HashMap<>();
        String cursor = afterOffset;
        long wanted = toSeq - fromSeq + 1;
        while (found.size() < wanted) {
            List<UsageEvent> page = read(shard, cursor, 1000);
            if (page.isEmpty()) {
                break;
            }
            for (UsageEvent e : page) {
                if (e.clientId().equals(clientId)
                        && e.incarnation().equals(incarnation)
                        && e.sequence() >= fromSeq
                        && e.sequence() <= toSeq) {
                    found.put(e.sequence(), e);
                }
            }
            cursor = page.get(page.size() - 1).offset();
        }
        return found.values().stream()
                .sorted((a, b) -> Long.compare(a.sequence(), b.sequence()))
                .toList();
    }

    /** Adds the event(s) of one stream entry to {@code out}. */
    private static void decode(int shard, List<?> entry, List<UsageEvent> out) {
        String offset = (String) entry.get(0);
        List<?> fields = (List<?>) entry.get(1);
        Map<String, String> f = new HashMap<>(fields.size());
        for (int i = 0; i + 1 < fields.size(); i += 2) {
            f.put((String) fields.get(i), (String) fields.get(i + 1));
        }
        try {
            if (BATCH.equals(f.get("k"))) {
                decodeBatch(shard, offset, f, out);
                return;
            }
            out.add(new UsageEvent(
                    offset,
                    shard,
                    UsageEvent.Kind.of(f.get("k")),
                    f.get("pid"),
                    QuotaMonth.parse(f.get("m")),
                    f.get("d"),
                    f.get("r"),
                    Long.parseLong(f.get("n")),
                    Long.parseLong(f.get("u")),
                    Long.parseLong(f.get("l")),
                    f.get("c"),
                    Long.parseLong(f.get("q")),
                    f.get("i")));
        } catch (RuntimeException e) {
            throw PidPoolException.illegalState("malformed usage event %s in shard %d: %s", offset, shard, f);
        }
    }

    /**
     * A batch entry ({@code deduct_batch.lua}): {@code c} client, {@code i} incarnation, {@code q} the
     * first sequence number, {@code e} one line per deduction, {@code
     * pid|month|deductionId|amount|usedAfter|limit}, numbered {@code q, q+1, ...} in line order.
     */
    private static void decodeBatch(int shard, String offset, Map<String, String> f, List<UsageEvent> out) {
        String client = f.get("c");
        String incarnation = f.get("i");
        long seq = Long.parseLong(f.get("q"));
        String lines = f.get("e");
        List<UsageEvent> events = new ArrayList<>();
        QuotaMonth month = null;
        String monthKey = null;
        int start = 0;
        int end = lines.length();
        while (start < end) {
            int nl = lines.indexOf('\n', start);
            int stop = nl < 0 ? end : nl;
            String[] v = lines.substring(start, stop).split("\\|", -1);
            if (v.length != 6) {
                throw new IllegalArgumentException("batch line with " + v.length + " fields");
            }
            if (!v[1].equals(monthKey)) {
                month = QuotaMonth.parse(v[1]);
                monthKey = v[1];
            }
            events.add(new UsageEvent(
                    offset,
                    shard,
                    UsageEvent.Kind.DEDUCTION,
                    v[0],
                    month,
                    v[2],
                    "",
                    Long.parseLong(v[3]),
                    Long.parseLong(v[4]),
                    Long.parseLong(v[5]),
                    client,
                    seq++,
                    incarnation));
            start = stop + 1;
        }
        if (events.isEmpty() || client == null || incarnation == null) {
            throw new IllegalArgumentException("empty batch entry");
        }
        out.addAll(events);
    }

    private static void requireOffset(String offset, String field) {
        requireArgument(
                offset != null && OFFSET.matcher(offset).matches(),
                field,
                "%s must be a stream id <ms>-<n>, was '%s'",
                field,
                offset);
    }
}
