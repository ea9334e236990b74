package io.pidpool.client.internal.zk;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.PidPoolException;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * How a PidPool process authenticates to ZooKeeper and which ACL the nodes it creates get.
 *
 * <p><b>Digest identity, shared.</b> With {@link #digest(String)} every session adds {@code
 * digest user:password} and every node created under the cluster's namespace ({@code
 * /pidpool/<cluster>} and below) gets exactly one ACL entry: {@code digest:user:<hash>} with all
 * permissions. Servers and SDKs of a cluster must use the <em>same</em> identity: the leader writes
 * into PID nodes under instance nodes an SDK created, and an SDK acknowledges in nodes the leader
 * created; with two identities one side would be locked out of the other's nodes. An unauthenticated
 * (or differently authenticated) client can neither list, read, write nor delete anything in the tree.
 *
 * <p><b>Above the namespace.</b> {@code /pidpool}, shared by every cluster of an ensemble, gets the
 * cluster's identity (all) plus {@code world:anyone} READ and CREATE, so another cluster with another
 * identity can still create its own namespace beside it (ZooKeeper 3.9 answers even {@code exists}
 * with NoAuth on a node the caller may not read, and Curator's {@code mkdirs} asks {@code exists});
 * anyone can thus list the cluster names, nobody but the identity can delete or change it.
 *
 * <p><b>Raw writes.</b> Curator applies {@link #aclProvider} to everything it creates (also parents and
 * the namespace). Code that creates nodes through the raw {@code ZooKeeper} handle (fenced multi-ops,
 * worker-id slots) must pass {@link #acl()} itself.
 *
 * <p>{@link #none()} keeps ZooKeeper's open ACL ({@code world:anyone} all), the behaviour without
 * configuration. {@link #toString()} shows the user name only. Immutable and thread-safe.
 */
public final class ZkAuth {
    private static final ZkAuth NONE = new ZkAuth(null, null, ZooDefs.Ids.OPEN_ACL_UNSAFE);

    private final String user;
    private final byte[] credentials; // user:password, UTF-8
    private final List<ACL> acl;

    private ZkAuth(String user, byte[] credentials, List<ACL> acl) {
        this.user = user;
        this.credentials = credentials;
        this.acl = aclList(acl);
    }

    /** No authentication; nodes are created with ZooKeeper's open ACL. */
    public static ZkAuth none() {
        return NONE;
    }

    /**
     * The digest identity {@code user:password} (the form of {@code zkCli addauth digest}).
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} ({@code zookeeper.auth}) unless it is a
     *     non-empty user without ':' or whitespace, a colon and a non-empty password; the message never
     *     repeats the password
     */
    public static ZkAuth digest(String userColonPassword) {
        requireNonNull(userColonPassword, "zookeeper.auth");
        int colon = userColonPassword.indexOf(':');
        requireArgument(
                colon > 0 && colon < userColonPassword.length() - 1,
                "zookeeper.auth",
                "zookeeper.auth must be user:password (digest), with a non-empty user and password");
        String user = userColonPassword.substring(0, colon);
        requireArgument(
                user.chars().noneMatch(Character::isWhitespace),
                "zookeeper.auth",
                "the user of zookeeper.auth must not contain whitespace");
        String digest;
        try {
            digest = DigestAuthenticationProvider.generateDigest(userColonPassword);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-1", e);
        }
        return new ZkAuth(
                user,
                userColonPassword.getBytes(StandardCharsets.UTF_8),
                List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", digest))));
    }

    /** {@link #digest} for a non-blank value, else {@link #none()} (configuration: empty means none). */
    public static ZkAuth of(String userColonPasswordOrBlank) {
        return userColonPasswordOrBlank == null || userColonPasswordOrBlank.isBlank()
                ? none()
                : digest(userColonPasswordOrBlank.strip());
    }

    public boolean enabled() {
        return credentials != null;
    }

    /** The digest user, or empty when {@link #none()}. */
    public String user() {
        return user == null ? "" : user;
    }

    /** The ACL of every node in a cluster's tree. */
    public List<ACL> acl() {
        return acl;
    }

    /**
     * Curator's view: {@link #acl()} for the namespace root {@code /pidpool/<cluster>} and everything
     * below; for its ancestors ({@code /pidpool}) the identity plus {@code world:anyone} READ, CREATE.
     *
     * @param namespace the Curator namespace without leading slash, e.g. {@code pidpool/default}
     */
    public ACLProvider aclProvider(String namespace) {
        requireArgument(
                namespace != null && !namespace.isBlank() && !namespace.startsWith("/"),
                "namespace",
                "namespace must be like pidpool/<cluster>, was '%s'",
                namespace);
        if (!enabled()) {
            return new Provider(acl, acl, "/" + namespace);
        }
        List<ACL> ancestors = aclList(
                List.of(acl.get(0), new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE)));
        return new Provider(acl, ancestors, "/" + namespace);
    }

    /**
     * Adds this authentication and {@link #aclProvider(String)} to a Curator builder; with {@link
     * #none()} it leaves the builder as it is.
     */
    public CuratorFrameworkFactory.Builder configure(CuratorFrameworkFactory.Builder builder, String namespace) {
        requireNonNull(builder, "builder");
        if (enabled()) {
            builder.authorization("digest", credentials.clone()).aclProvider(aclProvider(namespace));
        }
        return builder;
    }

    /**
     * An unmodifiable list that answers {@code contains(null)}: ZooKeeper's {@code validateACL} asks
     * it, and {@code List.of}/{@code List.copyOf} throw on a null query.
     */
    static List<ACL> aclList(List<ACL> acl) {
        return Collections.unmodifiableList(new ArrayList<>(acl));
    }

    @Override
    public String toString() {
        return enabled() ? "ZkAuth[digest user=" + user + "]" : "ZkAuth[none]";
    }

    private record Provider(List<ACL> inside, List<ACL> ancestors, String root) implements ACLProvider {
        @Override
        public List<ACL> getDefaultAcl() {
            return inside;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
            boolean below = path != null && (path.equals(root) || path.startsWith(root + "/"));
            return below ? inside : ancestors;
        }
    }
}
