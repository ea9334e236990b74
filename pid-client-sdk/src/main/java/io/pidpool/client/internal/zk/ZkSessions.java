package io.pidpool.client.internal.zk;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.net.InetAddress;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.ExponentialBackoffRetry;

/** What every participant that opens a ZooKeeper session shares: bounds and its host's name. */
public final class ZkSessions {
    private ZkSessions() {}

    /**
     * {@code timeout} if it is a session timeout worth asking ZooKeeper for (100 ms .. 10 min).
     *
     * @throws io.pidpool.core.error.PidPoolException {@code INVALID_ARGUMENT} ({@code sessionTimeout})
     */
    public static Duration requireSessionTimeout(Duration timeout) {
        requireArgument(
                timeout != null && timeout.toMillis() >= 100 && timeout.toMillis() <= 600_000,
                "sessionTimeout",
                "sessionTimeout must be within 100 ms..10 min, was %s",
                timeout);
        return timeout;
    }

    /**
     * A Curator client builder with the settings every PidPool participant uses: session and
     * connection timeout {@code sessionTimeout}, a short exponential retry, and the ensemble as
     * configured (never the addresses the servers advertise). The caller adds auth and namespace.
     */
    public static CuratorFrameworkFactory.Builder clientBuilder(String connectString, Duration sessionTimeout) {
        int timeoutMs = (int) sessionTimeout.toMillis();
        return CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(timeoutMs)
                .connectionTimeoutMs(timeoutMs)
                .retryPolicy(new ExponentialBackoffRetry(100, 3, 1000))
                .ensembleTracker(false);
    }

    /**
     * {@code curator} if it is started (a client given to a participant to share).
     *
     * @throws io.pidpool.core.error.PidPoolException {@code INVALID_ARGUMENT} ({@code curator})
     */
    public static CuratorFramework requireStarted(CuratorFramework curator) {
        requireArgument(
                curator.getState() == CuratorFrameworkState.STARTED,
                "curator",
                "the Curator client must be started, was %s",
                curator.getState());
        return curator;
    }

    /**
     * {@code connectString} stripped, if it is a ZooKeeper ensemble {@code host:port[,host:port...]}
     * without a chroot (the namespace comes from the cluster name).
     *
     * @throws io.pidpool.core.error.PidPoolException {@code INVALID_ARGUMENT} ({@code connectString})
     */
    public static String requireConnectString(String connectString) {
        requireArgument(
                connectString != null && !connectString.isBlank() && !connectString.contains("/"),
                "connectString",
                "connectString must be host:port[,host:port...] without a chroot, was '%s'",
                connectString);
        return connectString.strip();
    }

    /**
     * The name written into this process's nodes for operators: {@code HOSTNAME} if set (containers
     * set it), else the local host's name, else {@code localhost}.
     */
    public static String localHostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.strip();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "localhost";
        }
    }
}
