package io.pidpool.worker.runtime;

import static io.pidpool.core.error.Preconditions.requireArgument;

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
 * The standalone worker's ZooKeeper digest identity ({@code zookeeper.auth: user:password}): the
 * session authenticates with it and every node the worker creates gets the cluster's ACL.
 *
 * <p><b>Same ACL as the servers.</b> This is the rule of {@code io.pidpool.client.zk.ZkAuth}, which
 * pid-server and the SDK use: inside the namespace {@code /pidpool/<cluster>} (the namespace node
 * included) exactly {@code digest:user:<hash>} with all permissions; on its ancestors ({@code
 * /pidpool}) that entry plus {@code world:anyone} READ and CREATE, so other clusters can create
 * their namespace beside it. Servers, SDKs and workers of one cluster must share one identity: the
 * servers' in-process worker reads this worker's ring node and the other way round.
 *
 * <p><b>Why a copy.</b> {@code ZkAuth} lives in pid-client-sdk, which brings Redisson (and its
 * dependencies) into the shaded pid-worker.jar; the SDK cannot depend on pid-worker either (JDBI,
 * Flyway, Hikari for every SDK user), and pid-core may not see ZooKeeper types. {@code
 * ZooKeeperAuthTest} fails when the two disagree on the ACL or on which values they accept.
 *
 * <p>{@link #toString()} shows the user only; error messages never repeat the value. Immutable and
 * thread-safe.
 */
final class ZooKeeperAuth {
    static final String KEY = "zookeeper.auth";
    private static final ZooKeeperAuth NONE = new ZooKeeperAuth(null, null, ZooDefs.Ids.OPEN_ACL_UNSAFE);

    private final String user;
    private final byte[] credentials; // user:password, UTF-8
    private final List<ACL> acl;

    private ZooKeeperAuth(String user, byte[] credentials, List<ACL> acl) {
        this.user = user;
        this.credentials = credentials;
        this.acl = aclList(acl);
    }

    /** No authentication: ZooKeeper's open ACL. */
    static ZooKeeperAuth none() {
        return NONE;
    }

    /**
     * {@code user:password} for a non-blank value (stripped), {@link #none()} for null or blank.
     *
     * @throws PidPoolException INVALID_ARGUMENT ({@value #KEY}) unless the value is a non-empty user
     *     without ':' or whitespace, a colon and a non-empty password; the message never repeats it
     */
    static ZooKeeperAuth of(String userColonPasswordOrBlank) {
        if (userColonPasswordOrBlank == null || userColonPasswordOrBlank.isBlank()) {
            return NONE;
        }
        String value = userColonPasswordOrBlank.strip();
        int colon = value.indexOf(':');
        requireArgument(
                colon > 0
                        && colon < value.length() - 1
                        && value.substring(0, colon).chars().noneMatch(Character::isWhitespace),
                KEY,
                "%s (or PIDPOOL_ZOOKEEPER_AUTH) must be user:password (ZooKeeper digest): a non-empty user without"
                        + " whitespace, a colon, a non-empty password",
                KEY);
        String digest;
        try {
            digest = DigestAuthenticationProvider.generateDigest(value);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-1", e);
        }
        return new ZooKeeperAuth(
                value.substring(0, colon),
                value.getBytes(StandardCharsets.UTF_8),
                List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", digest))));
    }

    boolean enabled() {
        return credentials != null;
    }

    /** The digest user, empty for {@link #none()}. */
    String user() {
        return user == null ? "" : user;
    }

    /** The ACL of every node in the cluster's tree. */
    List<ACL> acl() {
        return acl;
    }

    /** Curator's view: {@link #acl()} in and below {@code /<namespace>}, the shared ACL above it. */
    ACLProvider aclProvider(String namespace) {
        String root = "/" + namespace;
        List<ACL> ancestors = enabled()
                ? aclList(List.of(
                        acl.get(0), new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE)))
                : acl;
        return new ACLProvider() {
            @Override
            public List<ACL> getDefaultAcl() {
                return acl;
            }

            @Override
            public List<ACL> getAclForPath(String path) {
                boolean below = path != null && (path.equals(root) || path.startsWith(root + "/"));
                return below ? acl : ancestors;
            }
        };
    }

    /** Adds the authentication and {@link #aclProvider} to a builder; {@link #none()} leaves it as it is. */
    CuratorFrameworkFactory.Builder configure(CuratorFrameworkFactory.Builder builder, String namespace) {
        if (enabled()) {
            builder.authorization("digest", credentials.clone()).aclProvider(aclProvider(namespace));
        }
        return builder;
    }

    /** ZooKeeper's {@code validateACL} asks {@code contains(null)}, which {@code List.of} rejects. */
    private static List<ACL> aclList(List<ACL> acl) {
        return Collections.unmodifiableList(new ArrayList<>(acl));
    }

    @Override
    public String toString() {
        return enabled() ? "digest user " + user : "none";
    }
}
