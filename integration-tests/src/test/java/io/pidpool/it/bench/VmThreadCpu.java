package io.pidpool.it.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU of the JVM's own threads by kind, read from Linux's {@code /proc/self/task/<id>/schedstat}
 * (nanoseconds on a CPU) and {@code comm} (the thread's name): the JIT compilers, the garbage
 * collectors and the VM thread, which {@link java.lang.management.ThreadMXBean} does not list.
 * Empty where the system does not tell.
 */
final class VmThreadCpu {
    private static final Path TASKS = Path.of("/proc/self/task");

    private VmThreadCpu() {}

    /** CPU so far (nanoseconds) of the live JVM threads, by kind: {@code JIT}, {@code GC}, {@code VM}. */
    static Map<String, Long> byKind() {
        Map<String, Long> kinds = new LinkedHashMap<>();
        try (var tasks = Files.list(TASKS)) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    String kind = kind(Files.readString(task.resolve("comm")).strip());
                    if (kind != null) {
                        long nanos = Long.parseLong(Files.readString(task.resolve("schedstat"))
                                .strip()
                                .split(" ")[0]);
                        kinds.merge(kind, nanos, Long::sum);
                    }
                } catch (java.io.IOException | RuntimeException exited) {
                    // the thread ended while listed
                }
            }
        } catch (java.io.IOException | RuntimeException notLinux) {
            return Map.of();
        }
        return kinds;
    }

    /** What each kind spent since {@code before} (threads that ended meanwhile are not counted). */
    static Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> now = byKind();
        now.replaceAll((kind, nanos) -> nanos - before.getOrDefault(kind, 0L));
        return now;
    }

    /** HotSpot's names for its own threads (truncated to 15 characters by Linux). */
    private static String kind(String comm) {
        if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) {
            return "JIT";
        }
        if (comm.startsWith("GC Thread") || comm.startsWith("G1 ")) {
            return "GC";
        }
        if (comm.startsWith("VM ")
                || comm.equals("Service Thread")
                || comm.startsWith("Monitor Deflati")
                || comm.startsWith("Sweeper thread")) {
            return "VM";
        }
        return null;
    }
}
