package io.pidpool.server.runtime;

import io.pidpool.core.error.PidPoolException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An exclusive OS file lock on {@code <data-dir>/standalone.lock}, held for the life of a {@code
 * standalone} process, like ZooKeeper's and Kafka's {@code .lock} in their data directories. A
 * second standalone on the same directory would otherwise start its own ZooKeeper and Redis on the
 * running one's files (snapshots, append-only file) and corrupt them; with the lock it refuses before
 * touching anything else. The OS drops the lock when the process dies, even by SIGKILL, so a stale
 * file never blocks a restart. The file holds the owner's pid, for the message.
 */
final class DataDirLock implements AutoCloseable {
    static final String FILE = "standalone.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private DataDirLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes the lock or throws {@code INVALID_ARGUMENT} on {@code --data-dir} naming the holder. */
    static DataDirLock acquire(Path dataDir) throws IOException {
        Path file = dataDir.resolve(FILE);
        FileChannel channel =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null; // held by this JVM (another StandaloneServer in the same process)
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        if (lock == null) {
            String holder = readHolder(channel);
            channel.close();
            throw PidPoolException.invalid(
                    "--data-dir",
                    "data directory %s is in use by another standalone%s; stop it first or choose another"
                            + " --data-dir",
                    dataDir,
                    holder.isEmpty() ? "" : " (pid " + holder + ")");
        }
        channel.truncate(0);
        channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
        channel.force(false);
        return new DataDirLock(channel, lock);
    }

    private static String readHolder(FileChannel channel) {
        try {
            ByteBuffer buffer = ByteBuffer.allocate(32);
            channel.read(buffer, 0);
            return new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}
