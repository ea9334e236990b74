package io.pidpool.it.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU of the JVM's own threads by kind, read from Linux's {@code /proc/self/task/<id>/schedstat}
 * (nanoseconds on a CPU) and {@code comm} (the thread's name): the JIT compilers, the garbage
 * collectors and the VM threads, which {@link java.lang.management.ThreadMXBean} does not list.
 * Empty where the system does not tell.
 *
 * <p>The first call lists every thread of the process to find HotSpot's own, which takes tens of
 * milliseconds with thousands of threads (while the measured work runs on); later calls read only
 * those threads' files. A compiler thread HotSpot starts later is not counted.
 */
final class VmThreadCpu {
    private static final Path TASKS = Path.of("/proc/self/task");
    /** HotSpot's threads: task directory to kind, found by the first call. */
    private static Map<Path, String> tasks;

    private VmThreadCpu() {}

    /** CPU so far (nanoseconds) of HotSpot's threads, by kind: {@code JIT}, {@code GC}, {@code VM}. */
    static synchronized Map<String, Long> byKind() {
        if (tasks == null) {
            tasks = find();
        }
        Map<String, Long> kinds = new LinkedHashMap<>();
        tasks.forEach((task, kind) -> {
            try {
                String stat = Files.readString(task.resolve("schedstat")).strip();
                kinds.merge(kind, Long.parseLong(stat.split(" ")[0]), Long::sum);
            } catch (java.io.IOException | RuntimeException ended) {
                // HotSpot ended the thread (a compiler thread can come and go)
            }
        });
        return kinds;
    }

    /** What each kind spent since {@code before}. */
    static Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> now = byKind();
        now.replaceAll((kind, nanos) -> nanos - before.getOrDefault(kind, 0L));
        return now;
    }

    private static Map<Path, String> find() {
        Map<Path, String> found = new LinkedHashMap<>();
        try (var all = Files.list(TASKS)) {
            for (Path task : (Iterable<Path>) all::iterator) {
                try {
                    String kind = kind(Files.readString(task.resolve("comm")).strip());
                    if (kind != null) {
                        found.put(task, kind);
                    }
                } catch (java.io.IOException | RuntimeException ended) {
                    // the thread ended while listed
                }
            }
        } catch (java.io.IOException | RuntimeException notLinux) {
            return Map.of();
        }
        return found;
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
