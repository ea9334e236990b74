/**
 * The infrastructure {@code standalone} runs in-process or as a child process, all bound to
 * 127.0.0.1 with their data under one directory: ZooKeeper (its own {@code
 * ZooKeeperServerEmbedded}), Redis (the {@code redis-server} binary packaged in the {@code
 * com.github.codemonstur:embedded-redis} artifact, or one found on {@code PATH}) and H2 file
 * database urls. Meant for one machine and newcomers, never for production.
 */
package io.pidpool.server.embedded;
