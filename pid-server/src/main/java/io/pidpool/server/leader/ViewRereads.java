package io.pidpool.server.leader;

import io.pidpool.server.zk.ZkSupport;
import io.pidpool.server.zk.ZkWrite;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a term's {@link ZkView} back in line with ZooKeeper where it may be wrong. A rescan (sync,
 * then a scan of {@code /modules}) runs on a schedule, when the connection is back and after a write
 * whose outcome is unknown; such writes stay in doubt until a rescan that started after them has been
 * replayed ({@link TermEvent#outcome}, {@link TermEvent.ViewProven}), so a failed rescan is tried
 * again while any are. A refresh re-reads just the nodes a refused write touched.
 *
 * <p>Concurrency: the term's serial executor; the reads complete there.
 */
final class ViewRereads {
    /** The term's lines keep one logger name, whichever part of the term writes them. */
    private static final Logger log = LoggerFactory.getLogger(LeaderTerm.class);

    private static final Duration TOMBSTONE_AGE = Duration.ofMinutes(10);
    /** A failed rescan is tried again this much later while writes are in doubt (they wait for it). */
    private static final long RESCAN_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final NodeContext ctx;
    private final TermBookkeeping state;
    private final PassPacing pacing;
    private final LeaderTerm term;

    private boolean rescanRunning;
    private boolean rescanAgain;
    /** Whether a retry of a failed rescan is scheduled ({@link #retryRescan}). */
    private boolean rescanRetry;

    ViewRereads(NodeContext ctx, TermBookkeeping state, PassPacing pacing, LeaderTerm term) {
        this.ctx = ctx;
        this.state = state;
        this.pacing = pacing;
        this.term = term;
    }

    /** Re-reads the whole tree (sync + scan) in the background and merges it into the view. */
    void rescan() {
        if (term.isClosed()) {
            return;
        }
        if (rescanRunning) {
            rescanAgain = true;
            return;
        }
        rescanRunning = true;
        long number = state.rescansStarted() + 1;
        state.replay(new TermEvent.RescanStarted(number));
        ZkSupport.sync(ctx.client(), "/")
                .thenCompose(done -> ctx.scanner().scan(ctx.layout().modules(), 3))
                .whenCompleteAsync(
                        (events, error) -> {
                            rescanRunning = false;
                            if (term.isClosed()) {
                                return;
                            }
                            if (error != null) {
                                log.warn(
                                        "rescan failed: {}",
                                        LeaderTerm.unwrap(error).getMessage());
                                if (state.writesInDoubt() > 0 && !rescanAgain) {
                                    // writes in doubt block their PIDs until a rescan succeeds
                                    retryRescan();
                                }
                            } else {
                                events.forEach(ctx.view()::replay);
                                ctx.view().pruneTombstones(TOMBSTONE_AGE);
                                // the view is current as of this rescan's start: writes in doubt since
                                // before it are settled (their nodes are in the view, or proven absent)
                                state.replay(new TermEvent.ViewProven(number));
                                pacing.requestFull();
                            }
                            if (rescanAgain) {
                                rescanAgain = false;
                                rescan();
                            }
                            term.requestPass();
                        },
                        ctx.serial());
    }

    /** Rescans again after {@link #RESCAN_RETRY_NANOS} (once at a time). */
    private void retryRescan() {
        if (rescanRetry) {
            return;
        }
        rescanRetry = true;
        ctx.serial()
                .schedule(
                        () -> term.guarded(() -> {
                            rescanRetry = false;
                            rescan();
                        }),
                        RESCAN_RETRY_NANOS,
                        TimeUnit.NANOSECONDS);
    }

    /** Re-reads the nodes a failed write touched, and their parents (whose listings prove a child gone). */
    void refresh(Intent intent) {
        Set<String> paths = new LinkedHashSet<>();
        for (ZkWrite write : intent.writes()) {
            paths.add(write.path());
            int slash = write.path().lastIndexOf('/');
            if (slash > 0) {
                paths.add(write.path().substring(0, slash));
            }
        }
        ctx.scanner()
                .read(List.copyOf(paths))
                .whenCompleteAsync(
                        (events, error) -> {
                            if (term.isClosed()) {
                                return;
                            }
                            if (error != null) {
                                log.debug(
                                        "refresh failed ({}), rescanning",
                                        LeaderTerm.unwrap(error).getMessage());
                                rescan();
                                return;
                            }
                            events.forEach(ctx.view()::replay);
                            if (intent.pid() != null) {
                                ctx.view().markDirty(intent.pid());
                            }
                            pacing.requestPlacement();
                            term.requestPass();
                        },
                        ctx.serial());
    }
}
