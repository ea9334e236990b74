package io.pidpool.client.internal;

import io.pidpool.client.PidListener;
import io.pidpool.client.SecretOpener;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.ZkLayout;
import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * Everything {@link io.pidpool.client.PidClient.Builder} collected, validated. Public only because
 * the builder lives in another package; not an API.
 *
 * @param redisAddress {@code null} if not given (unused until the quota ledger arrives)
 * @param instancePrefix {@code null}: derive from the host name
 * @param host {@code null}: resolve this machine's name at start
 * @param callbackExecutor {@code null}: the client owns a small pool
 */
public record ClientSettings(
        String connectString,
        ZkLayout layout,
        ModuleKey module,
        String redisAddress,
        PidListener listener,
        SecretOpener secretOpener,
        String instancePrefix,
        String host,
        int weight,
        Duration sessionTimeout,
        Duration startTimeout,
        Duration closeTimeout,
        Ticker ticker,
        Executor callbackExecutor) {}
