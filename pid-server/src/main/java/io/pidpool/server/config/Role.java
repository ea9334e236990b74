package io.pidpool.server.config;

/** What an operator-API token may do. Each role includes the ones before it. */
public enum Role {
    /** Reads: every {@code GET}. */
    VIEWER,
    /** Reads and writes: batches, module settings. */
    OPERATOR,
    /** Everything, including administrative endpoints. */
    ADMIN;

    /** The kinds of request a route may need. */
    public enum Access {
        READ,
        WRITE,
        ADMIN
    }

    public boolean allows(Access access) {
        return switch (access) {
            case READ -> true;
            case WRITE -> this == OPERATOR || this == ADMIN;
            case ADMIN -> this == ADMIN;
        };
    }
}
