package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a term reads from the database: the accounts and modules into its {@link DbView}, the stored
 * assignment rows and cooldowns into its {@link TermBookkeeping}. The term start loads only the
 * accounts and cooldowns ({@link #loadAccounts}); the rows follow after the first pass
 * ({@link #loadRows}), as they are not needed to serve; the periodic reload reads everything again,
 * spaced by its own cost ({@link #reloadIfDue}). Every load asks for a full pass.
 *
 * <p>Shared by {@link LeaderTerm} and the protocol simulation (which has no warm copy).
 *
 * <p>Concurrency: the term's serial executor only.
 */
final class TermLoader {
    private static final Logger log = LoggerFactory.getLogger(TermLoader.class);
    /** The periodic database reload waits at least this many times its own cost. */
    private static final int RELOAD_COST_FACTOR = 20;
    /**
     * Account versions whose changes stay listed for followers' warm copies (WarmAccounts): a follower
     * further behind than this loads every account when it is elected.
     */
    private static final long KEPT_ACCOUNT_VERSIONS = 10_000;

    private final LeaderDatabase store;
    private final Supplier<Optional<DbView>> warm;
    private final DbView db;
    private final TermBookkeeping state;
    private final Ticker ticker;
    private final Clock clock;
    private final PassPacing pacing;

    private long lastLoadNanos;
    private long lastLoadCostNanos;
    /** Where this term's accounts came from (for the log line of the term start). */
    private String accountsSource = "";
    /** Whether {@link TermBookkeeping#rows()} holds the stored rows yet (read after the term's first pass). */
    private boolean rowsLoaded;

    /**
     * @param warm the follower's warm copy of the accounts, taken once at the term start
     *     ({@link WarmAccounts#take}); empty: load them all
     * @param ticker the leader's monotonic time (cooldown ends, the reload's spacing)
     * @param clock wall time, in which the stored cooldowns end
     */
    TermLoader(
            LeaderDatabase store,
            Supplier<Optional<DbView>> warm,
            DbView db,
            TermBookkeeping state,
            Ticker ticker,
            Clock clock,
            PassPacing pacing) {
        this.store = store;
        this.warm = warm;
        this.db = db;
        this.state = state;
        this.ticker = ticker;
        this.clock = clock;
        this.pacing = pacing;
    }

    /** Where the term's accounts came from: a full load or the warm copy of which version. */
    String accountsSource() {
        return accountsSource;
    }

    /** Whether the stored assignment rows are loaded (a pass diffs rows only then). */
    boolean rowsLoaded() {
        return rowsLoaded;
    }

    /**
     * The term start's load: accounts, modules and cooldowns, not the rows (see {@link #loadRows()}).
     * The accounts come from the follower's warm copy if the store can say what changed since its
     * version (then exactly those accounts are read again, deletes included), else from a full load.
     */
    void loadAccounts() {
        long t0 = ticker.read();
        accountsSource = "full load";
        Optional<DbView> copy = warm.get();
        Optional<AccountChanges> changes = copy.filter(w -> w.version() != AccountSnapshot.UNVERSIONED)
                .flatMap(w -> store.changesSince(w.version()));
        if (changes.isPresent()) {
            DbView proven = copy.get();
            long from = proven.version();
            proven.apply(changes.get());
            db.takeOver(proven);
            accountsSource = String.format(
                    "warm copy of version %d, now %d: %d changed, %d removed",
                    from,
                    db.version(),
                    changes.get().changed().size(),
                    changes.get().removed().size());
        } else {
            db.load(store.loadAccounts());
        }
        loadCooldowns();
        lastLoadNanos = ticker.read();
        lastLoadCostNanos = lastLoadNanos - t0;
        pacing.requestFull();
    }

    /** The stored assignment rows, once per term (after its first pass): a full pass diffs them all. */
    void loadRows() {
        if (rowsLoaded) {
            return;
        }
        state.replay(new TermEvent.RowsLoaded(store.loadAssignments()));
        rowsLoaded = true;
        pacing.requestFull(); // diff every row against the view
    }

    /**
     * Level-triggered: reloads the database view, unless less than {@value #RELOAD_COST_FACTOR} times
     * its own cost has passed since the last load (at 100,000 accounts a load takes seconds: it must
     * not occupy the leader's thread every few seconds; the leader's own changes reach the view by
     * replay anyway, so the reload only catches changes made behind its back). Then prunes the
     * account change log, which only the term of {@code epoch} may.
     */
    void reloadIfDue(Epoch epoch) {
        long now = ticker.read();
        if (now - lastLoadNanos < RELOAD_COST_FACTOR * lastLoadCostNanos) {
            return;
        }
        loadDatabase();
        try {
            store.pruneChanges(KEPT_ACCOUNT_VERSIONS, epoch);
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.FENCED) {
                throw e;
            }
            log.debug("account change log not pruned: {}", e.getMessage());
        }
    }

    private void loadDatabase() {
        long t0 = ticker.read();
        LeaderDatabase.Snapshot snapshot = store.load();
        db.load(snapshot);
        state.replay(new TermEvent.RowsLoaded(snapshot.assignments()));
        rowsLoaded = true;
        loadCooldowns(); // stored end times: a new leader does not start them over
        lastLoadNanos = ticker.read();
        lastLoadCostNanos = lastLoadNanos - t0;
        pacing.requestFull();
    }

    /**
     * The stored cooldowns are the source of truth for their end times: each is converted from wall
     * time to this leader's monotonic time (an end in the past ends at the next pass). A cooldown this
     * term knows but could not store is kept.
     */
    private void loadCooldowns() {
        long now = ticker.read();
        Instant wall = clock.instant();
        for (Cooldown stored : store.loadCooldowns()) {
            long left = Math.max(0, Duration.between(wall, stored.until()).toNanos());
            state.replay(new TermEvent.CooldownStarted(stored.pidId(), now + left));
        }
    }
}
