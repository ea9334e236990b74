package io.pidpool.core.model;

/** The kinds of operator request a batch may carry . */
public enum OperationType {
    ADD,
    UPDATE,
    DELETE,
    MIGRATE,
    RESET_QUOTA,
    SET_SERVERS
}
