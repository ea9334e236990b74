package io.pidpool.it.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.server.http.HealthCheck;
import io.pidpool.server.runtime.PidServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Redis over TLS with a password: a redis-server with a TLS port (self-signed certificate for
 * 127.0.0.1, made with openssl) and {@code requirepass}, and a pid-server that reaches it only through
 * a {@code rediss://} address and a trust store given in the {@code redis.redisson} block.
 */
class RedisTlsIT {
    static final String PASSWORD = "tls-" + SecurityWorld.randomHex(8);

    @TempDir
    Path dir;

    @Test
    void serverTalksToRedisOverTlsWithAPrivateTrustStore() throws Exception {
        run(List.of(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-keyout",
                dir.resolve("key.pem").toString(),
                "-out",
                dir.resolve("cert.pem").toString(),
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1"));
        run(List.of(
                "keytool",
                "-importcert",
                "-noprompt",
                "-alias",
                "redis",
                "-file",
                dir.resolve("cert.pem").toString(),
                "-keystore",
                dir.resolve("trust.p12").toString(),
                "-storetype",
                "PKCS12",
                "-storepass",
                "changeit"));
        int tlsPort = freePort();
        try (TestingServer zk = TestZooKeeper.start();
                RedisProcess redis = RedisProcess.start(
                        false,
                        RedisProcess.binary(),
                        List.of(
                                "--tls-port", Integer.toString(tlsPort),
                                "--tls-cert-file", dir.resolve("cert.pem").toString(),
                                "--tls-key-file", dir.resolve("key.pem").toString(),
                                "--tls-ca-cert-file", dir.resolve("cert.pem").toString(),
                                "--tls-auth-clients", "no"))) {
            assertThat(RedisProcess.command(redis.port(), "CONFIG", "SET", "requirepass", PASSWORD))
                    .isEqualTo("+OK");
            String yaml =
                    """
                    cluster: tls
                    http: { host: 127.0.0.1, port: 0 }
                    zookeeper: { connect: "%s", connectionTimeoutMs: 20000 }
                    redis:
                      redisson:
                        singleServerConfig:
                          address: "rediss://127.0.0.1:%d"
                          password: "%s"
                          sslTruststore: "%s"
                          sslTruststorePassword: changeit
                    database: { url: "jdbc:h2:mem:tls%s;DB_CLOSE_DELAY=-1" }
                    security:
                      secretKey: "%s"
                      tokens: [ { token: "tls-admin-token-0123456789", role: admin } ]
                    worker: { enabled: false }
                    """
                            .formatted(
                                    zk.getConnectString(),
                                    tlsPort,
                                    PASSWORD,
                                    dir.resolve("trust.p12").toUri(),
                                    SecurityWorld.randomHex(4),
                                    SecurityWorld.randomKey());
            try (PidServer server = SecurityWorld.startServer(yaml)) {
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> server.health().components().get("redis").status() == HealthCheck.Status.UP);
                server.redisson().getBucket("tls-check").set("written over TLS");
                assertThat(server.redisson().getBucket("tls-check").get()).isEqualTo("written over TLS");
                // every connection of the server arrived on the TLS port (laddr), none on the plain one
                String clients = authedCommand(redis.port(), "CLIENT LIST");
                assertThat(clients).contains("laddr=127.0.0.1:" + tlsPort);
                assertThat(clients.lines().filter(l -> l.contains("laddr=127.0.0.1:" + redis.port())))
                        .as("only this probe uses the plain port")
                        .hasSize(1);
                assertThat(server.config().redis().toString()).doesNotContain(PASSWORD);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(command.get(0) + " failed: " + out);
        }
    }

    /** AUTH and one inline command on one plain connection; the reply as text. */
    private static String authedCommand(int port, String command) throws IOException {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            var out = socket.getOutputStream();
            out.write(
                    ("AUTH " + PASSWORD + "\r\n" + command + "\r\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
            out.flush();
            var in = new java.io.BufferedReader(
                    new java.io.InputStreamReader(socket.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
            String ok = in.readLine();
            if (!"+OK".equals(ok)) {
                throw new IllegalStateException("AUTH answered " + ok);
            }
            String header = in.readLine(); // $<length> of the bulk reply
            int length = Integer.parseInt(header.substring(1));
            char[] body = new char[length];
            int read = 0;
            while (read < length) {
                int n = in.read(body, read, length - read);
                if (n < 0) {
                    break;
                }
                read += n;
            }
            return new String(body, 0, read);
        }
    }
}
