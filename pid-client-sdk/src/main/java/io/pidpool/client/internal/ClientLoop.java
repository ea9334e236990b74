package io.pidpool.client.internal;

import java.util.List;

/**
 * Port: what the parts of a client ({@link PidsWatch}, {@link AckWriter}) ask of the client that owns
 * them. The client runs all its state on one thread (the state thread); production is {@link
 * DefaultPidClient}, the protocol simulation runs the same parts on virtual time.
 */
interface ClientLoop {
    /** Any thread: runs {@code task} on the state thread later ({@code what} names it in traces). */
    void post(String what, Runnable task);

    /** State thread: carries out the tracker's decisions. */
    void apply(List<Action> actions);

    /** Any thread: a successful reply on {@code sessionId} to a request sent at {@code sentAt}. */
    void onReply(long sessionId, long sentAt);

    /** State thread: a read of {@code nodes} PID nodes (0 for a listing) was sent; close waits for it. */
    void readSent(int nodes);

    /** State thread: a read sent with {@link #readSent} was answered (or failed). */
    void readAnswered();

    /** State thread: a write of {@code pid} settled; a notification that waited for it is decided now. */
    void writeSettled(long generation, String pid);
}
