package io.pidpool.client.internal;

import io.pidpool.client.PidListener;
import io.pidpool.client.SecretOpener;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.ZkLayout;
import java.time.Duration;
import java.util.concurrent.Executor;
import org.redisson.api.RedissonClient;

/**
 * Everything {@link io.pidpool.client.PidClient.Builder} collected, validated. Public only because
 * the builder lives in another package; not an API.
 *
 * @param redisAddress {@code null} if not given (then {@code redisson} or no quota)
 * @param redisPassword {@code null}: none
 * @param redisson {@code null}: build one from {@code redisAddress} or {@code redisOptions.configYaml}
 *     (owned by the client); else the caller's client, never closed by the SDK
 * @param redisOptions database, timeout or a Redisson configuration for a client the SDK builds
 * @param instancePrefix {@code null}: derive from the host name
 * @param host {@code null}: resolve this machine's name at start
 * @param callbackDeadline D: the longest {@code onAssigned}/{@code onUpdated} may run (registered)
 * @param callbackExecutor {@code null}: the client owns a small pool
 * @param zkAuth ZooKeeper authentication and the ACL of the nodes the client creates
 * @param batchedPermits the quota's {@code PermitIssuer} runs in batched mode
 * @param closeOnJvmExit a shutdown hook closes the client ({@link JvmExit})
 * @param observer metrics ({@link ClientObserver#NONE}: none)
 */
public record ClientSettings(
        String connectString,
        ZkLayout layout,
        ModuleKey module,
        String redisAddress,
        String redisPassword,
        RedissonClient redisson,
        RedisOptions redisOptions,
        PidListener listener,
        SecretOpener secretOpener,
        String instancePrefix,
        String host,
        int weight,
        Duration sessionTimeout,
        Duration startTimeout,
        Duration closeTimeout,
        Duration callbackDeadline,
        Ticker ticker,
        Executor callbackExecutor,
        ZkAuth zkAuth,
        boolean batchedPermits,
        boolean closeOnJvmExit,
        ClientObserver observer) {

    /** Whether {@code tryAcquire}/{@code refund} are available (a Redis address, configuration or client was given). */
    public boolean hasQuota() {
        return redisAddress != null || redisson != null || redisOptions.configYaml() != null;
    }
}
