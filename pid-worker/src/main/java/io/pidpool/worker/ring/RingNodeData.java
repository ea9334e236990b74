package io.pidpool.worker.ring;

import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.worker.task.NewTask;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * The data of a ring node {@code /workers/<group>/<memberId>}, one {@code key=value} per line:
 *
 * <pre>
 * vnodes=512
 * host=app-1
 * startedAt=2026-11-21T19:00:00Z
 * types=alert.webhook,pidpool.log,usage.sync
 * </pre>
 *
 * {@code types} lists the task types the member has handlers for, sorted, comma-separated (task
 * types cannot contain commas). Nodes written before this line existed have none: they are read as
 * running no type, so that no member ever leaves a task of its own types to a member that may lack
 * the handler (docs/worker.md §2). Unreadable data counts as 1 virtual node and no type.
 */
final class RingNodeData {
    private RingNodeData() {}

    static byte[] encode(int virtualNodes, String host, Instant startedAt, Set<String> types) {
        String data = "vnodes=" + virtualNodes + "\nhost=" + host + "\nstartedAt=" + startedAt + "\ntypes="
                + String.join(",", new TreeSet<>(types)) + "\n";
        return data.getBytes(StandardCharsets.UTF_8);
    }

    /** The member a node's data describes; never throws. */
    static GroupRing.Member decode(byte[] data) {
        Properties p = new Properties();
        try {
            p.load(new StringReader(new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8)));
        } catch (IOException | IllegalArgumentException e) {
            return new GroupRing.Member(1, Set.of());
        }
        int vnodes;
        try {
            vnodes = Integer.parseInt(p.getProperty("vnodes", "1").trim());
        } catch (NumberFormatException e) {
            vnodes = 1;
        }
        vnodes = Math.max(1, Math.min(vnodes, ConsistentHashRing.MAX_VIRTUAL_NODES));
        Set<String> types = new TreeSet<>();
        for (String t : p.getProperty("types", "").split(",")) {
            String type = t.trim();
            if (NewTask.TYPE.matcher(type).matches()) {
                types.add(type);
            }
        }
        return new GroupRing.Member(vnodes, types);
    }
}
