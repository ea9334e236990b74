package io.pidpool.server.embedded;

import java.nio.file.Path;

/** JDBC urls of H2 file databases for {@code standalone}. */
public final class H2Files {
    private H2Files() {}

    /**
     * The url of the database {@code <dir>/pidpool.mv.db}. H2's own shutdown hook is disabled
     * ({@code DB_CLOSE_ON_EXIT=FALSE}): the server closes its pool, and with it the database, in its
     * own shutdown order.
     */
    public static String url(Path dir) {
        return "jdbc:h2:file:" + dir.resolve("pidpool").toAbsolutePath() + ";DB_CLOSE_ON_EXIT=FALSE";
    }
}
