package io.pidpool.client.internal;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidListener;
import io.pidpool.client.SecretOpener;
import io.pidpool.core.protocol.PidNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls the user's {@link PidListener} and {@link SecretOpener} and turns whatever they do into an
 * {@link Outcome}. Never throws: a listener that throws (even an {@link Error}) is logged and
 * reported, and the thread that called it lives on.
 *
 * <p>Concurrency: stateless and thread-safe; runs on the callback executor. The caller guarantees
 * that calls for one PID do not overlap.
 */
final class ListenerInvoker {
    private static final Logger log = LoggerFactory.getLogger(ListenerInvoker.class);
    static final int MAX_REASON = 500;

    private final PidListener listener;
    private final SecretOpener opener;
    private final ClientObserver observer;

    ListenerInvoker(PidListener listener, SecretOpener opener) {
        this(listener, opener, ClientObserver.NONE);
    }

    ListenerInvoker(PidListener listener, SecretOpener opener, ClientObserver observer) {
        this.listener = listener;
        this.opener = opener;
        this.observer = observer;
    }

    Outcome assign(PidNode node) {
        return assign(node, account -> {});
    }

    /** {@code given} learns the account right before {@code onAssigned} is called with it. */
    Outcome assign(PidNode node, java.util.function.Consumer<PidAccount> given) {
        PidAccount account;
        try {
            account = account(node);
        } catch (Throwable t) {
            log.warn("PID {}: cannot open its secret, refusing it: {}", node.pidId(), describe(t));
            return new Outcome.Failed("cannot open secret: " + describe(t));
        }
        given.accept(account);
        long start = System.nanoTime();
        try {
            listener.onAssigned(account);
            observe(ClientObserver.Callback.ON_ASSIGNED, true, start);
            log.debug("PID {} assigned", node.pidId()); // at INFO once per burst (OutcomeQueue)
            return new Outcome.Assigned(account);
        } catch (Throwable t) {
            observe(ClientObserver.Callback.ON_ASSIGNED, false, start);
            log.warn("PID {}: onAssigned threw, the PID is not held", node.pidId(), t);
            return new Outcome.Failed("onAssigned failed: " + describe(t));
        }
    }

    Outcome update(PidAccount before, PidNode node) {
        PidAccount after;
        try {
            after = account(node);
        } catch (Throwable t) {
            log.warn("PID {}: cannot open its updated secret, keeping the old account: {}", node.pidId(), describe(t));
            return new Outcome.Failed("cannot open secret: " + describe(t));
        }
        long start = System.nanoTime();
        try {
            listener.onUpdated(before, after);
            observe(ClientObserver.Callback.ON_UPDATED, true, start);
            log.debug("PID {} updated", node.pidId());
            return new Outcome.Updated(after);
        } catch (Throwable t) {
            observe(ClientObserver.Callback.ON_UPDATED, false, start);
            log.warn("PID {}: onUpdated threw, keeping the old account", node.pidId(), t);
            return new Outcome.Failed("onUpdated failed: " + describe(t));
        }
    }

    Outcome revoke(PidAccount account, String why) {
        try {
            observer.revoked(RevokeCause.of(why));
        } catch (RuntimeException e) {
            log.warn("The client observer failed: {}", e.toString());
        }
        long start = System.nanoTime();
        try {
            listener.onRevoked(account);
            observe(ClientObserver.Callback.ON_REVOKED, true, start);
            log.debug("PID {} revoked: {}", account.id(), why);
            return new Outcome.Revoked(why);
        } catch (Throwable t) {
            observe(ClientObserver.Callback.ON_REVOKED, false, start);
            log.error(
                    "PID {}: onRevoked threw, the logout may have failed; the PID is not used any more and"
                            + " the failure is reported, so the leader frees it only after the grace period",
                    account.id(),
                    t);
            return new Outcome.RevokeFailed("onRevoked failed: " + describe(t));
        }
    }

    private void observe(ClientObserver.Callback callback, boolean ok, long start) {
        try {
            observer.callback(callback, ok, System.nanoTime() - start);
        } catch (RuntimeException e) {
            log.warn("The client observer failed: {}", e.toString());
        }
    }

    private PidAccount account(PidNode node) {
        PidNode.AccountPayload p = node.account();
        String secret = opener.open(p.secret().keyId(), p.secret().sealed());
        if (secret == null) {
            throw new IllegalStateException("the secret opener returned null");
        }
        return new PidAccount(node.pidId(), secret, p.monthlyQuota(), p.overageAllowance(), p.attributes());
    }

    /** Class and message on one line, bounded, for the PID node's error field. */
    static String describe(Throwable t) {
        String message = t.getMessage();
        String text = t.getClass().getName() + (message == null ? "" : ": " + message);
        text = text.replaceAll("[\\r\\n\\t]+", " ");
        return text.length() <= MAX_REASON ? text : text.substring(0, MAX_REASON - 3) + "...";
    }
}
