package io.pidpool.core.sim;

import io.pidpool.core.sim.SimScheduler.Proc;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * A single ZooKeeper server on virtual time, with the semantics PidPool relies on:
 *
 * <ul>
 *   <li>nodes with data, version, czxid/mzxid/pzxid, ephemeral owner; one zxid per transaction;
 *       create (persistent, ephemeral, ephemeral sequential), setData, delete (versioned), getData,
 *       exists, getChildren, sync, multi (all or nothing; check(version) and existence checks; on a
 *       failure the ops before the first failing one answer OK, those behind it
 *       RUNTIMEINCONSISTENCY, as ZooKeeper does), and a subtree read (what a scan gathers);
 *   <li>sessions with a negotiated timeout, expired on virtual time when the server has not heard
 *       from the client for T; expiry removes the session's ephemeral nodes;
 *   <li>persistent recursive watches and one-shot data watches, notified per session in zxid order
 *       and ahead of the reply of the write that caused them (one FIFO channel per connection); a
 *       notification carries the node's data and stat (what the watcher's read would return);
 *       notifications sent while the client is disconnected are lost (persistent watches are not
 *       replayed on reconnection; one-shot watches fire on reconnection if the node changed);
 *   <li>per-client links that can be cut each way, with a delay, and that can lose a reply AFTER
 *       the request was applied (the connection breaks; the client sees CONNECTIONLOSS, outcome
 *       unknown);
 *   <li>client-side connection states as Curator reports them: SUSPENDED after 2T/3 without a
 *       message from the server (or at once when the connection breaks), LOST when the session
 *       expired or after T in SUSPENDED, RECONNECTED when a connection is back (same or new
 *       session).
 * </ul>
 *
 * <p>Concurrency: single-threaded on the {@link SimScheduler}.
 */
public final class SimZooKeeper {
    public enum Code {
        OK,
        NONODE,
        NODEEXISTS,
        BADVERSION,
        NOTEMPTY,
        NOCHILDRENFOREPHEMERALS,
        RUNTIMEINCONSISTENCY,
        CONNECTIONLOSS,
        SESSIONEXPIRED
    }

    public enum Mode {
        PERSISTENT,
        EPHEMERAL,
        EPHEMERAL_SEQUENTIAL
    }

    public enum ConnState {
        CONNECTED,
        SUSPENDED,
        RECONNECTED,
        LOST
    }

    public record Stat(long czxid, long mzxid, long pzxid, int version, long ephemeralOwner, int numChildren) {}

    public sealed interface Op {
        String path();
    }

    public record Create(String path, byte[] data, Mode mode) implements Op {}

    public record SetData(String path, byte[] data, int version) implements Op {}

    public record Delete(String path, int version) implements Op {}

    public record Check(String path, int version) implements Op {}

    /** Only in read multi-ops. */
    public record GetData(String path) implements Op {}

    /** @param path the created path for a create (sequential names resolved) */
    public record OpResult(Code code, String path, byte[] data, Stat stat) {}

    public enum EventType {
        CREATED,
        CHANGED,
        DELETED
    }

    /** A notification; for CREATED/CHANGED with the node's data and stat at that zxid. */
    public record WatchEvent(EventType type, String path, long zxid, byte[] data, Stat stat) {}

    /** One node of a subtree read. */
    public record NodeData(String path, byte[] data, Stat stat, List<String> children) {}

    public interface Callback<T> {
        void done(Code code, T value);
    }

    private static final class Node {
        byte[] data;
        long czxid;
        long mzxid;
        long pzxid;
        int version;
        int cversion;
        long owner;
        final TreeSet<String> children = new TreeSet<>();

        Stat stat() {
            return new Stat(czxid, mzxid, pzxid, version, owner, children.size());
        }
    }

    private final class Session {
        final long id;
        final long timeout;
        long lastHeard;
        boolean expired;
        Connection conn;
        final Set<String> persistent = new TreeSet<>();
        final Set<String> oneShot = new HashSet<>();
        final Set<String> ephemerals = new TreeSet<>();

        Session(long id, long timeout) {
            this.id = id;
            this.timeout = timeout;
            this.lastHeard = sched.now();
        }
    }

    /** One TCP connection of a client; dead once broken or replaced. */
    private static final class Connection {
        final Client client;
        Session session;
        boolean dead;
        long lastToServer;
        long lastToClient;

        Connection(Client client) {
            this.client = client;
        }
    }

    private final SimScheduler sched;
    private final Map<String, Node> nodes = new HashMap<>();
    private final Map<Long, Session> sessions = new TreeMap<>();
    private long zxid;
    private long nextSession = 0x1000;
    private final long tick;
    /** Per transaction: the session that made it, for the checkers. */
    public interface CommitListener {
        void committed(long zxid, long session, List<Op> ops);
    }

    private final List<CommitListener> listeners = new ArrayList<>();

    public SimZooKeeper(SimScheduler sched, long tickNanos) {
        this.sched = sched;
        this.tick = tickNanos;
        Node root = new Node();
        root.data = new byte[0];
        nodes.put("/", root);
        sched.after(tick, null, "zk tick", this::serverTick);
    }

    public void onCommit(CommitListener l) {
        listeners.add(l);
    }

    public long zxid() {
        return zxid;
    }

    // ---------------------------------------------------------------- direct (test) access

    /** The node's data, or null (the checkers read the tree directly, outside any session). */
    public byte[] data(String path) {
        Node n = nodes.get(path);
        return n == null ? null : n.data;
    }

    public Stat stat(String path) {
        Node n = nodes.get(path);
        return n == null ? null : n.stat();
    }

    public List<String> children(String path) {
        Node n = nodes.get(path);
        return n == null ? List.of() : List.copyOf(n.children);
    }

    public boolean sessionAlive(long id) {
        Session s = sessions.get(id);
        return s != null && !s.expired;
    }

    /** Creates a persistent node (and its parents) outside any session: setup. */
    public void ensure(String path) {
        if (nodes.containsKey(path)) {
            return;
        }
        ensure(parent(path));
        apply(null, new Create(path, new byte[0], Mode.PERSISTENT), ++zxid);
    }

    /** Server-side expiry of a session now (fault). */
    public void expire(long sessionId) {
        Session s = sessions.get(sessionId);
        if (s != null && !s.expired) {
            expireSession(s, "forced");
        }
    }

    // ---------------------------------------------------------------- server

    private void serverTick() {
        long now = sched.now();
        for (Session s : List.copyOf(sessions.values())) {
            if (!s.expired && now - s.lastHeard >= s.timeout) {
                expireSession(s, "not heard from for " + (now - s.lastHeard) / 1_000_000 + " ms");
            }
        }
        sched.after(tick, null, "zk tick", this::serverTick);
    }

    private void expireSession(Session s, String why) {
        s.expired = true;
        sched.trace("zk", "session 0x" + Long.toHexString(s.id) + " expired: " + why);
        long z = ++zxid;
        List<Op> ops = new ArrayList<>();
        for (String path : List.copyOf(s.ephemerals)) {
            ops.add(new Delete(path, -1));
            remove(path, z);
        }
        s.ephemerals.clear();
        for (CommitListener l : listeners) {
            l.committed(z, 0, ops);
        }
        Connection c = s.conn;
        if (c != null && !c.dead) {
            toClient(c, "expired", () -> c.client.sessionExpired(c));
        }
    }

    private static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }

    private static String name(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** Evaluates without applying: the code the op would get. */
    private Code check(Session s, Op op, Map<String, Boolean> exists) {
        String path = op.path();
        boolean there = exists.containsKey(path) ? exists.get(path) : nodes.containsKey(path);
        if (op instanceof Create c) {
            if (c.mode() != Mode.EPHEMERAL_SEQUENTIAL && there) {
                return Code.NODEEXISTS;
            }
            String p = parent(path);
            boolean parentThere = exists.containsKey(p) ? exists.get(p) : nodes.containsKey(p);
            if (!parentThere) {
                return Code.NONODE;
            }
            Node pn = nodes.get(p);
            if (pn != null && pn.owner != 0) {
                return Code.NOCHILDRENFOREPHEMERALS;
            }
            return Code.OK;
        }
        if (!there) {
            return Code.NONODE;
        }
        Node n = nodes.get(path);
        int version = op instanceof SetData sd
                ? sd.version()
                : op instanceof Delete d ? d.version() : op instanceof Check k ? k.version() : -1;
        if (n != null && version != -1 && n.version != version) {
            return Code.BADVERSION;
        }
        if (op instanceof Delete && n != null && !n.children.isEmpty()) {
            return Code.NOTEMPTY;
        }
        return Code.OK;
    }

    /** Applies one checked write at {@code z}; returns its result. */
    private OpResult apply(Session s, Op op, long z) {
        if (op instanceof Create c) {
            String path = c.path();
            Node pn = nodes.get(parent(path));
            if (c.mode() == Mode.EPHEMERAL_SEQUENTIAL) {
                path = path + String.format("%010d", pn.cversion);
            }
            Node n = new Node();
            n.data = c.data() == null ? new byte[0] : c.data();
            n.czxid = z;
            n.mzxid = z;
            n.pzxid = z;
            n.owner = c.mode() == Mode.PERSISTENT || s == null ? 0 : s.id;
            nodes.put(path, n);
            pn.children.add(name(path));
            pn.cversion++;
            pn.pzxid = z;
            if (n.owner != 0) {
                s.ephemerals.add(path);
            }
            notify(EventType.CREATED, path, z, n);
            return new OpResult(Code.OK, path, null, n.stat());
        } else if (op instanceof SetData sd) {
            Node n = nodes.get(sd.path());
            n.data = sd.data() == null ? new byte[0] : sd.data();
            n.mzxid = z;
            n.version++;
            notify(EventType.CHANGED, sd.path(), z, n);
            return new OpResult(Code.OK, sd.path(), null, n.stat());
        } else if (op instanceof Delete d) {
            remove(d.path(), z);
            return new OpResult(Code.OK, d.path(), null, null);
        }
        return new OpResult(Code.OK, op.path(), null, null);
    }

    private void remove(String path, long z) {
        Node n = nodes.remove(path);
        if (n == null) {
            return;
        }
        Node pn = nodes.get(parent(path));
        pn.children.remove(name(path));
        pn.cversion++;
        pn.pzxid = z;
        if (n.owner != 0) {
            Session owner = sessions.get(n.owner);
            if (owner != null) {
                owner.ephemerals.remove(path);
            }
        }
        notify(EventType.DELETED, path, z, null);
    }

    private void notify(EventType type, String path, long z, Node n) {
        for (Session s : sessions.values()) {
            if (s.expired || s.conn == null) {
                continue;
            }
            boolean hit = s.oneShot.remove(path);
            if (!hit) {
                for (String w : s.persistent) {
                    if (path.equals(w) || path.startsWith(w.endsWith("/") ? w : w + "/")) {
                        hit = true;
                        break;
                    }
                }
            }
            if (hit) {
                Connection c = s.conn;
                WatchEvent e = new WatchEvent(type, path, z, n == null ? null : n.data, n == null ? null : n.stat());
                toClient(c, "watch", () -> c.client.watchEvent(c, e));
            }
        }
    }

    /** A write request arrived: one transaction. */
    private List<OpResult> transact(Session s, List<Op> ops) {
        Map<String, Boolean> exists = new HashMap<>();
        List<Code> codes = new ArrayList<>();
        int failed = -1;
        for (Op op : ops) {
            Code code = check(s, op, exists);
            codes.add(code);
            if (code != Code.OK) {
                failed = codes.size() - 1;
                break;
            }
            if (op instanceof Create c && c.mode() != Mode.EPHEMERAL_SEQUENTIAL) {
                exists.put(op.path(), true);
            } else if (op instanceof Delete) {
                exists.put(op.path(), false);
            }
        }
        List<OpResult> results = new ArrayList<>();
        if (failed >= 0) {
            for (int i = 0; i < ops.size(); i++) {
                Code code = i < failed ? Code.OK : i == failed ? codes.get(i) : Code.RUNTIMEINCONSISTENCY;
                results.add(new OpResult(code, ops.get(i).path(), null, null));
            }
            return results;
        }
        long z = ++zxid;
        for (Op op : ops) {
            results.add(apply(s, op, z));
        }
        for (CommitListener l : listeners) {
            l.committed(z, s == null ? 0 : s.id, ops);
        }
        return results;
    }

    private OpResult read(Session s, String path, boolean watch) {
        Node n = nodes.get(path);
        if (watch && s != null) {
            s.oneShot.add(path);
        }
        return n == null ? new OpResult(Code.NONODE, path, null, null) : new OpResult(Code.OK, path, n.data, n.stat());
    }

    private void subtree(String path, List<NodeData> out) {
        Node n = nodes.get(path);
        if (n == null) {
            return;
        }
        out.add(new NodeData(path, n.data, n.stat(), List.copyOf(n.children)));
        for (String child : n.children) {
            subtree(path.equals("/") ? "/" + child : path + "/" + child, out);
        }
    }

    // ---------------------------------------------------------------- network

    private void toServer(Connection c, String what, Runnable atServer) {
        Client cl = c.client;
        long at = Math.max(sched.now() + cl.delay(), c.lastToServer);
        c.lastToServer = at;
        sched.at(at, null, cl.name + "->zk " + what, () -> {
            if (c.dead || cl.cutToServer) {
                // lost on the wire: a TCP connection that loses data is dead; the client finds out by
                // its read timeout and reconnects (nothing is silently skipped on a live connection)
                c.dead = true;
                return;
            }
            Session s = c.session;
            if (s != null) {
                if (s.expired) {
                    toClient(c, "expired", () -> cl.sessionExpired(c));
                    return;
                }
                if (s.conn != c) {
                    return; // a stale connection of the session
                }
                s.lastHeard = sched.now();
            }
            atServer.run();
        });
    }

    private void toClient(Connection c, String what, Runnable atClient) {
        Client cl = c.client;
        if (cl.cutToClient && !cl.keepsReplies) {
            c.dead = true;
            return;
        }
        long at = Math.max(sched.now() + cl.delay(), c.lastToClient);
        c.lastToClient = at;
        sched.at(at, cl.proc, "zk->" + cl.name + " " + what, () -> {
            if (cl.cutToClient && !cl.keepsReplies) {
                c.dead = true;
            }
            if (c.dead || cl.conn != c || !cl.connected) {
                return;
            }
            cl.lastReceived = sched.now();
            atClient.run();
        });
    }

    /** A reply that may be lost after the request was applied (the connection then breaks). */
    private void reply(Connection c, String what, Runnable atClient) {
        Client cl = c.client;
        if (cl.loseReplies > 0 && !cl.keepsReplies && sched.chance(cl.loseReplies)) {
            sched.note(cl.name + ": reply to " + what + " lost after it was applied; connection breaks");
            c.dead = true;
            sched.after(cl.delay(), cl.proc, "zk->" + cl.name + " reset", () -> cl.broken(c, "connection reset"));
            return;
        }
        toClient(c, what, atClient);
    }

    // ---------------------------------------------------------------- client

    public Client client(String name, Proc proc, long requestedTimeout) {
        return new Client(name, proc, requestedTimeout);
    }

    /**
     * One ZooKeeper client (a Curator framework) of one process. Callbacks run as events of that
     * process. Requests made while disconnected fail with CONNECTIONLOSS at once; requests in flight
     * when the connection breaks fail with CONNECTIONLOSS (applied or not).
     */
    public final class Client {
        final String name;
        final Proc proc;
        final long requested;
        Connection conn;
        boolean connected;
        boolean started;
        boolean closed;
        long sessionId;
        long timeout;
        long lastReceived;
        long disconnectedAt = -1;
        boolean everConnected;
        boolean lostReported;
        long lastZxidSeen;
        // faults
        public boolean cutToServer;
        public boolean cutToClient;
        public double loseReplies;
        /** Known-open defect switch: replies to this client's requests are never lost (outcome always known). */
        public boolean keepsReplies;

        public long minDelay = 200_000;
        public long maxDelay = 2_000_000;
        private long reqSeq;
        private final Map<Long, Runnable> pending = new LinkedHashMap<>();
        private final List<Consumer<ConnState>> stateListeners = new ArrayList<>();
        private final Map<String, Consumer<WatchEvent>> persistentWatches = new LinkedHashMap<>();
        private final Map<String, List<Consumer<WatchEvent>>> oneShot = new HashMap<>();
        private boolean tickScheduled;

        Client(String name, Proc proc, long requested) {
            this.name = name;
            this.proc = proc;
            this.requested = requested;
        }

        long delay() {
            return sched.between(minDelay, maxDelay);
        }

        public String name() {
            return name;
        }

        public void onState(Consumer<ConnState> l) {
            stateListeners.add(l);
        }

        public long sessionId() {
            return connected ? sessionId : 0;
        }

        /** The session of the last connection, even while disconnected (0 before the first). */
        public long lastSessionId() {
            return sessionId;
        }

        public long negotiatedTimeout() {
            return timeout;
        }

        public boolean connected() {
            return connected;
        }

        public void start() {
            started = true;
            connect();
            if (!tickScheduled) {
                tickScheduled = true;
                sched.after(requested / 15, proc, "zkclient tick", this::clientTick);
            }
        }

        /** A graceful close: the server ends the session at once (its ephemeral nodes go). */
        public void close() {
            if (connected) {
                Connection c = conn;
                toServer(c, "closeSession", () -> expireSession(c.session, "closed by the client"));
            }
            crash();
        }

        /** The process died: the server keeps the session until it expires. */
        public void crash() {
            closed = true;
            if (conn != null) {
                conn.dead = true;
            }
            connected = false;
        }

        private void clientTick() {
            if (closed) {
                return;
            }
            long now = sched.now();
            if (connected) {
                if (now - lastReceived >= timeout * 2 / 3) {
                    broken(conn, "no message from the server for " + (now - lastReceived) / 1_000_000 + " ms");
                } else if (now - lastReceived >= timeout / 3 || now - conn.lastToServer >= timeout / 3) {
                    ping();
                }
            } else if (started) {
                if (everConnected && !lostReported && disconnectedAt >= 0 && now - disconnectedAt >= timeout) {
                    lose("suspended for the session timeout");
                }
                connect();
            }
            sched.after(
                    Math.max(1_000_000, (timeout == 0 ? requested : timeout) / 15),
                    proc,
                    "zkclient tick",
                    this::clientTick);
        }

        private void ping() {
            Connection c = conn;
            toServer(c, "ping", () -> toClient(c, "pong", () -> {}));
        }

        private void connect() {
            if (closed || connected || (conn != null && !conn.dead && conn.session == null)) {
                return;
            }
            Connection c = new Connection(this);
            conn = c;
            long wanted = lostReported || !everConnected ? 0 : sessionId;
            // the handshake travels outside toServer (no session yet)
            long at = sched.now() + delay();
            c.lastToServer = at;
            sched.at(at, null, name + "->zk connect", () -> {
                if (c.dead || cutToServer) {
                    c.dead = true;
                    return;
                }
                Session s = wanted == 0 ? null : sessions.get(wanted);
                if (wanted != 0 && (s == null || s.expired)) {
                    c.session = null;
                    Connection old = c;
                    toClientRaw(old, "expired", () -> sessionExpired(old));
                    return;
                }
                if (s == null) {
                    s = new Session(nextSession++, requested);
                    sessions.put(s.id, s);
                    sched.trace("zk", "session 0x" + Long.toHexString(s.id) + " created for " + name);
                }
                if (s.conn != null) {
                    s.conn.dead = true;
                }
                s.conn = c;
                s.lastHeard = sched.now();
                c.session = s;
                Session ss = s;
                toClientRaw(c, "connected", () -> connected(c, ss.id, ss.timeout, ss));
            });
        }

        private void toClientRaw(Connection c, String what, Runnable r) {
            if (cutToClient) {
                c.dead = true;
                return;
            }
            long at = Math.max(sched.now() + delay(), c.lastToClient);
            c.lastToClient = at;
            sched.at(at, proc, "zk->" + name + " " + what, () -> {
                if (c.dead || conn != c || closed || cutToClient) {
                    c.dead = true;
                    return;
                }
                lastReceived = sched.now();
                r.run();
            });
        }

        private void connected(Connection c, long id, long negotiated, Session s) {
            boolean same = everConnected && !lostReported && id == sessionId;
            boolean first = !everConnected;
            sessionId = id;
            timeout = negotiated;
            connected = true;
            everConnected = true;
            disconnectedAt = -1;
            lostReported = false;
            // one-shot watches: re-set, fired if the node changed meanwhile (SetWatches)
            if (same) {
                for (String path : List.copyOf(oneShot.keySet())) {
                    Node n = nodes.get(path);
                    if (n == null || n.mzxid > lastZxidSeen) {
                        WatchEvent e = new WatchEvent(
                                n == null ? EventType.DELETED : EventType.CHANGED,
                                path,
                                zxid,
                                n == null ? null : n.data,
                                n == null ? null : n.stat());
                        fire(e);
                    } else {
                        s.oneShot.add(path);
                    }
                }
            } else {
                oneShot.clear();
            }
            s.persistent.addAll(persistentWatches.keySet()); // re-added, events meanwhile are not replayed
            fireState(first ? ConnState.CONNECTED : ConnState.RECONNECTED);
        }

        void sessionExpired(Connection c) {
            if (c != conn || closed) {
                return;
            }
            connected = false;
            c.dead = true;
            failPending();
            if (!lostReported) {
                lose("session expired");
            }
        }

        private void lose(String why) {
            lostReported = true;
            persistentWatches.clear();
            oneShot.clear();
            sched.trace(name, "LOST (" + why + ")");
            fireState(ConnState.LOST);
        }

        /** The connection broke (read timeout, reset): in-flight requests fail with CONNECTIONLOSS. */
        void broken(Connection c, String why) {
            if (c != conn || closed || !connected) {
                if (c != null) {
                    c.dead = true;
                }
                return;
            }
            c.dead = true;
            connected = false;
            disconnectedAt = sched.now();
            sched.trace(name, "disconnected: " + why);
            failPending();
            fireState(ConnState.SUSPENDED);
        }

        private void failPending() {
            List<Runnable> fails = new ArrayList<>(pending.values());
            pending.clear();
            fails.forEach(Runnable::run);
        }

        private void fireState(ConnState state) {
            for (Consumer<ConnState> l : List.copyOf(stateListeners)) {
                l.accept(state);
            }
        }

        void watchEvent(Connection c, WatchEvent e) {
            lastZxidSeen = Math.max(lastZxidSeen, e.zxid());
            fire(e);
        }

        private void fire(WatchEvent e) {
            List<Consumer<WatchEvent>> once = oneShot.remove(e.path());
            if (once != null) {
                once.forEach(w -> w.accept(e));
            }
            for (var w : persistentWatches.entrySet()) {
                String root = w.getKey();
                if (e.path().equals(root) || e.path().startsWith(root + "/")) {
                    w.getValue().accept(e);
                }
            }
        }

        /** Sends one request; {@code atServer} computes the reply; the reply or a loss reaches {@code cb}. */
        private <T> void request(String what, java.util.function.Function<Session, T> atServer, Callback<T> cb) {
            if (!connected || closed) {
                sched.after(0, proc, name + " " + what + " refused", () -> cb.done(Code.CONNECTIONLOSS, null));
                return;
            }
            Connection c = conn;
            long id = reqSeq++;
            pending.put(id, () -> cb.done(Code.CONNECTIONLOSS, null));
            toServer(c, what, () -> {
                T value = atServer.apply(c.session);
                reply(c, what, () -> {
                    if (pending.remove(id) != null) {
                        lastZxidSeen = Math.max(lastZxidSeen, zxid);
                        cb.done(codeOf(value), value);
                    }
                });
            });
        }

        private Code codeOf(Object value) {
            if (value instanceof OpResult r) {
                return r.code();
            }
            if (value instanceof List<?> list && !list.isEmpty() && list.get(0) instanceof OpResult) {
                for (Object o : list) {
                    Code code = ((OpResult) o).code();
                    if (code != Code.OK && code != Code.RUNTIMEINCONSISTENCY) {
                        return code;
                    }
                }
            }
            return Code.OK;
        }

        public void create(String path, byte[] data, Mode mode, Callback<OpResult> cb) {
            request(
                    "create " + path,
                    s -> transact(s, List.of(new Create(path, data, mode))).get(0),
                    cb);
        }

        /** Creates missing parents as persistent nodes first (Curator's creatingParentsIfNeeded). */
        public void createWithParents(String path, byte[] data, Mode mode, Callback<OpResult> cb) {
            request(
                    "create " + path,
                    s -> {
                        List<String> missing = new ArrayList<>();
                        for (String p = parent(path); !nodes.containsKey(p); p = parent(p)) {
                            missing.add(0, p);
                        }
                        for (String p : missing) {
                            transact(s, List.of(new Create(p, new byte[0], Mode.PERSISTENT)));
                        }
                        return transact(s, List.of(new Create(path, data, mode)))
                                .get(0);
                    },
                    cb);
        }

        public void setData(String path, byte[] data, int version, Callback<OpResult> cb) {
            request(
                    "setData " + path,
                    s -> transact(s, List.of(new SetData(path, data, version))).get(0),
                    cb);
        }

        public void delete(String path, int version, Callback<OpResult> cb) {
            request(
                    "delete " + path,
                    s -> transact(s, List.of(new Delete(path, version))).get(0),
                    cb);
        }

        public void getData(String path, boolean watch, Callback<OpResult> cb) {
            request("getData " + path, s -> read(s, path, watch), cb);
        }

        /** One-shot watch on the node's data (set with the read). */
        public void getDataWatched(String path, Consumer<WatchEvent> watcher, Callback<OpResult> cb) {
            oneShot.computeIfAbsent(path, k -> new ArrayList<>()).add(watcher);
            getData(path, true, cb);
        }

        public void exists(String path, Callback<OpResult> cb) {
            request("exists " + path, s -> read(s, path, false), cb);
        }

        public void getChildren(String path, Callback<NodeData> cb) {
            request(
                    "getChildren " + path,
                    s -> {
                        Node n = nodes.get(path);
                        return n == null ? null : new NodeData(path, null, n.stat(), List.copyOf(n.children));
                    },
                    (code, value) -> cb.done(code == Code.OK && value == null ? Code.NONODE : code, value));
        }

        public void multi(List<Op> ops, Callback<List<OpResult>> cb) {
            request("multi(" + ops.size() + ") " + ops.get(ops.size() - 1).path(), s -> transact(s, ops), cb);
        }

        /** A read multi-op: each getData answers on its own. */
        public void readMulti(List<String> paths, Callback<List<OpResult>> cb) {
            request(
                    "read(" + paths.size() + ")",
                    s -> {
                        List<OpResult> out = new ArrayList<>();
                        paths.forEach(p -> out.add(read(s, p, false)));
                        return out;
                    },
                    (code, value) -> cb.done(code == Code.CONNECTIONLOSS ? code : Code.OK, value));
        }

        public void sync(Callback<Void> cb) {
            request("sync", s -> null, cb);
        }

        /** Everything under {@code path} as of one moment (what a scan gathers). */
        public void readTree(String path, Callback<List<NodeData>> cb) {
            request(
                    "scan " + path,
                    s -> {
                        List<NodeData> out = new ArrayList<>();
                        subtree(path, out);
                        return out;
                    },
                    cb);
        }

        /** A persistent recursive watch, kept across reconnections of the same session. */
        public void addPersistentWatch(String path, Consumer<WatchEvent> watcher) {
            persistentWatches.put(path, watcher);
            if (connected) {
                Connection c = conn;
                toServer(c, "addWatch " + path, () -> c.session.persistent.add(path));
            }
        }
    }
}
