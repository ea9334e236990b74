package io.pidpool.client.internal.quota;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.redisson.api.RLocalCachedMap;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.LocalCachedMapOptions;
import org.redisson.api.options.LocalCachedMapOptions.ReconnectionStrategy;

/**
 * The local caches of the quota shards' PID hashes, one per Redisson client and map options in this
 * JVM, shared by every {@link QuotaNearCache} that asks. A business JVM that runs several modules
 * gives each its own client but often one Redisson client: its clients then hold one local copy of
 * each shard and process each invalidation once, not once per client (with 200 clients in one JVM,
 * a batch of 10,000 new limits meant two million invalidations to apply). What a near cache keeps of
 * its own (its observations) stays its own.
 *
 * <p>Reference-counted: the last {@link #release} destroys the map and its subscription. Thread-safe.
 */
final class SharedLocalMaps {
    /** Redisson clients compare by identity; the options by what they configure. */
    private record Key(RedissonClient redisson, String name, Duration ttl, ReconnectionStrategy reconnection) {}

    private static final class Entry {
        final RLocalCachedMap<String, String> map;
        int users;

        Entry(RLocalCachedMap<String, String> map) {
            this.map = map;
        }
    }

    private static final Map<Key, Entry> MAPS = new HashMap<>();

    private SharedLocalMaps() {}

    /** The shared map for these options, created on first use; each call must be released once. */
    static RLocalCachedMap<String, String> acquire(
            RedissonClient redisson,
            String name,
            Duration ttl,
            ReconnectionStrategy reconnection,
            LocalCachedMapOptions<String, String> options) {
        Key key = new Key(redisson, name, ttl, reconnection);
        synchronized (MAPS) {
            Entry entry = MAPS.computeIfAbsent(key, k -> new Entry(redisson.getLocalCachedMap(options)));
            entry.users++;
            return entry.map;
        }
    }

    /** One user less; the last one destroys the local map (not the data in Redis). */
    static void release(RedissonClient redisson, String name, Duration ttl, ReconnectionStrategy reconnection) {
        Key key = new Key(redisson, name, ttl, reconnection);
        RLocalCachedMap<String, String> destroy = null;
        synchronized (MAPS) {
            Entry entry = MAPS.get(key);
            if (entry != null && --entry.users == 0) {
                MAPS.remove(key);
                destroy = entry.map;
            }
        }
        if (destroy != null) {
            destroy.destroy();
        }
    }
}
