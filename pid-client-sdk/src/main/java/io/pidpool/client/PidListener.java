package io.pidpool.client;

/**
 * Receives the PIDs the cluster assigns to this instance. Typically {@code onAssigned} logs in to
 * the third-party platform, {@code onRevoked} logs out.
 *
 * <p><b>Contract.</b> A PID is <em>held</em> from the moment {@link #onAssigned} returns normally
 * until {@link #onRevoked} returns. PidPool promises that no two instances hold the same PID at the
 * same time, so the listener must really stop using the account before {@code onRevoked} returns.
 * For one PID the calls always alternate {@code onAssigned} → ({@code onUpdated})* → {@code
 * onRevoked} → {@code onAssigned} …; {@code onRevoked} is called only for a PID whose {@code
 * onAssigned} returned normally, or overran the callback deadline (below).
 *
 * <p><b>Threads.</b> {@code onAssigned} and {@code onUpdated} run on the client's callback executor
 * (see {@link PidClient.Builder#callbackExecutor}); {@code onRevoked} always runs on threads of the
 * client's own, so logins that hang never delay a logout. Callbacks for <em>one</em> PID never overlap, and the SDK
 * never calls {@code onAssigned} for a PID while {@code onRevoked} for it is still running. Callbacks
 * for <em>different</em> PIDs may run concurrently, so a listener that shares state between PIDs must
 * be thread-safe. Callbacks should finish promptly: the leader may move a PID only after its {@code
 * onRevoked} returned, and {@link PidClient#close()} waits for them (up to its timeout).
 *
 * <p><b>Failures.</b> If {@code onAssigned} throws, the PID is not held; the SDK reports the failure
 * to the leader (in the PID's node), which gives the PID to another instance and puts it into
 * cooldown after repeated failures. Exceptions from {@code onUpdated} and {@code onRevoked} are
 * logged and reported. {@code onRevoked} throwing means the logout may have failed: the SDK stops
 * using the PID all the same, but does not release it to the leader; the leader hands it on only
 * after the grace period. No exception from a listener ever stops the SDK.
 *
 * <p><b>Callback deadline.</b> {@code onAssigned} and {@code onUpdated} must return within the
 * client's callback deadline D ({@link PidClient.Builder#callbackDeadline}, default 5 s). A call still
 * running at D is abandoned: its thread is interrupted, the PID is not held, and {@code onRevoked} is
 * called at once for the account that call was given, possibly while the abandoned call is still
 * running on its interrupted thread. {@code onRevoked} must then undo a login still in progress
 * (abort it, or log out as soon as it completes), and the abandoned call must not start using the
 * account. This is the only case in which {@code onRevoked} follows an {@code onAssigned} that did
 * not return normally, and in which callbacks for one PID overlap.
 *
 * <p>Do not call {@link PidClient#close()} from a callback: close waits for running callbacks.
 */
public interface PidListener {
    /**
     * The PID is now this instance's to use, once this method returns normally. Throw to refuse it
     * (e.g. the login failed); the exception's class and message are reported to the leader.
     */
    void onAssigned(PidAccount account) throws Exception;

    /**
     * The PID is no longer this instance's: stop using it (log out) before returning. Called when the
     * leader moves the PID, when the connection to ZooKeeper is suspended or its lease expires, after a
     * long process pause, and on {@link PidClient#close()}.
     */
    void onRevoked(PidAccount account);

    /**
     * The operator changed a held PID (quota, password, attributes). The PID stays held. If this
     * method throws, the SDK reports the failure and keeps treating {@code before} as the current
     * account.
     */
    default void onUpdated(PidAccount before, PidAccount after) {}
}
