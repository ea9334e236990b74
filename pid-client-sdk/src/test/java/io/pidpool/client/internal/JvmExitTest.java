package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The exit watch's rule on live threads: main ended, and only the client's own non-daemon threads left. */
class JvmExitTest {
    private final CountDownLatch release = new CountDownLatch(1);
    private final List<Thread> started = new ArrayList<>();
    private final ThreadGroup owned = JvmExit.newGroup("test-redis");

    @AfterEach
    void stopThreads() throws InterruptedException {
        release.countDown();
        for (Thread t : started) {
            t.join(5_000);
        }
    }

    private Thread thread(ThreadGroup group, String name, boolean daemon) {
        Thread t = new Thread(
                group,
                () -> {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                name);
        t.setDaemon(daemon);
        t.start();
        started.add(t);
        return t;
    }

    @Test
    void closesOnlyWhenMainEndedAndEveryOtherNonDaemonThreadIsTheClients() {
        ThreadGroup app = Thread.currentThread().getThreadGroup();
        Thread destroy = thread(app, "DestroyJavaVM", false);
        Thread redisson = thread(owned, "redisson-timer-1-1", false);
        Thread appDaemon = thread(app, "app-daemon", true);
        Thread appWorker = thread(app, "app-worker", false);
        Thread child = thread(new ThreadGroup(owned, "below"), "redisson-netty-1-1", false);

        assertThat(JvmExit.onlyOwnedThreadsKeepTheJvm(
                        new Thread[] {destroy, redisson, appDaemon, child}, Set.of(owned)))
                .isTrue();
        // an application thread still runs: leave the client alone
        assertThat(JvmExit.onlyOwnedThreadsKeepTheJvm(new Thread[] {destroy, redisson, appWorker}, Set.of(owned)))
                .isFalse();
        // main has not ended (no DestroyJavaVM): leave it alone even if nothing else runs
        assertThat(JvmExit.onlyOwnedThreadsKeepTheJvm(new Thread[] {redisson, appDaemon}, Set.of(owned)))
                .isFalse();
        // another client's group is not ours unless watched
        assertThat(JvmExit.onlyOwnedThreadsKeepTheJvm(new Thread[] {destroy, redisson}, Set.of()))
                .isFalse();
    }

    @Test
    void createInPutsEveryThreadTheObjectStartsIntoTheGroup() throws InterruptedException {
        Thread[] made = new Thread[1];
        Thread result = JvmExit.createIn(owned, () -> {
            made[0] = new Thread(() -> {}, "made-inside");
            return made[0];
        });
        assertThat(result.getThreadGroup()).isSameAs(owned);
    }
}
