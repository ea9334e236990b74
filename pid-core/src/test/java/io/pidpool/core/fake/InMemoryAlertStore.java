package io.pidpool.core.fake;

import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.AlertStore;
import io.pidpool.core.port.StorageLimits;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@link AlertStore} in memory. Thread-safe: every method holds the store's monitor. */
public final class InMemoryAlertStore implements AlertStore {
    private static final Comparator<StoredAlert> OLDEST_FIRST =
            Comparator.comparing((StoredAlert a) -> a.alert().firstSeen()).thenComparingLong(StoredAlert::id);

    private final Map<Long, StoredAlert> byId = new HashMap<>();
    private final Map<String, Long> openByKey = new HashMap<>();

    @Override
    public synchronized Raised raise(long id, Alert alert, Instant now) {
        Preconditions.requireNonNull(alert, "alert");
        Preconditions.requireNonNull(now, "now");
        Alert storable = StoredAlert.storable(alert);
        Long open = openByKey.get(storable.key());
        if (open != null) {
            StoredAlert updated = byId.get(open).seenAgain(storable, now);
            byId.put(open, updated);
            return new Raised(updated, false);
        }
        if (byId.containsKey(id)) {
            throw PidPoolException.conflict("id", "alert %d already exists", id);
        }
        StoredAlert created = StoredAlert.opened(id, storable);
        byId.put(id, created);
        openByKey.put(storable.key(), id);
        return new Raised(created, true);
    }

    @Override
    public synchronized Optional<StoredAlert> resolve(String key, Instant now) {
        Preconditions.requireNonNull(key, "key");
        Preconditions.requireNonNull(now, "now");
        Long open = openByKey.remove(key);
        if (open == null) {
            return Optional.empty();
        }
        StoredAlert resolved = byId.get(open).resolved(now);
        byId.put(open, resolved);
        return Optional.of(resolved);
    }

    @Override
    public synchronized List<StoredAlert> open() {
        return byId.values().stream()
                .filter(StoredAlert::isOpen)
                .sorted(OLDEST_FIRST)
                .toList();
    }

    @Override
    public synchronized List<StoredAlert> recent(int limit) {
        StorageLimits.requireLimit(limit);
        return byId.values().stream()
                .sorted(OLDEST_FIRST.reversed())
                .limit(limit)
                .toList();
    }

    @Override
    public synchronized Optional<StoredAlert> find(long id) {
        return Optional.ofNullable(byId.get(id));
    }

    @Override
    public synchronized Optional<StoredAlert> acknowledge(long id, String by, Instant now) {
        StoredAlert alert = byId.get(id);
        if (alert == null) {
            return Optional.empty();
        }
        StoredAlert acked = alert.acknowledgedBy(by, now);
        byId.put(id, acked);
        return Optional.of(acked);
    }
}
