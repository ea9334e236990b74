package io.pidpool.server.jdbc;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One random schema per database for every IT class of the test run, so the schema is migrated once
 * per JVM instead of once per class. Created on first use, emptied by each test
 * ({@link TestDatabase#fresh}), dropped when the whole run ends (the holder lives in JUnit's root
 * store, which closes {@link AutoCloseable} values last). Test classes run one after another.
 */
final class SharedTestDatabases implements BeforeAllCallback {
    private static volatile Holder holder;

    @Override
    public void beforeAll(ExtensionContext context) {
        holder = context.getRoot()
                .getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(SharedTestDatabases.class.getName(), k -> new Holder(), Holder.class);
    }

    /** The shared database of {@code dialect}; the class must use this extension. */
    static TestDatabase get(Dialect dialect) {
        if (holder == null) {
            throw new IllegalStateException("annotate the test class with @ExtendWith(SharedTestDatabases.class)");
        }
        return holder.get(dialect);
    }

    /** H2 always, PostgreSQL and MariaDB when their variables are set. */
    static List<TestDatabase> available() {
        var all = new ArrayList<TestDatabase>();
        all.add(get(Dialect.H2));
        if (TestDatabase.isSet(TestDatabase.POSTGRES_ENV)) {
            all.add(get(Dialect.POSTGRESQL));
        }
        if (TestDatabase.isSet(TestDatabase.MARIADB_ENV)) {
            all.add(get(Dialect.MARIADB));
        }
        return all;
    }

    private static final class Holder implements AutoCloseable {
        private final Map<Dialect, TestDatabase> databases = new EnumMap<>(Dialect.class);

        synchronized TestDatabase get(Dialect dialect) {
            return databases.computeIfAbsent(dialect, d -> switch (d) {
                case H2 -> TestDatabase.h2();
                case POSTGRESQL -> TestDatabase.postgres();
                case MARIADB -> TestDatabase.mariadb();
            });
        }

        @Override
        public synchronized void close() {
            // idempotent and one by one: a failure to drop one database leaves none of the others behind
            List<TestDatabase> all = new ArrayList<>(databases.values());
            databases.clear();
            IllegalStateException failed = null;
            for (TestDatabase db : all) {
                try {
                    db.close();
                } catch (RuntimeException e) {
                    failed = failed == null ? new IllegalStateException("dropping test databases failed", e) : failed;
                    failed.addSuppressed(e);
                }
            }
            if (failed != null) {
                throw failed;
            }
        }
    }
}
