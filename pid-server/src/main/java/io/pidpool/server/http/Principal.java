package io.pidpool.server.http;

import io.pidpool.server.config.Role;

/** Who sent a request: the token's name (written to the audit trail) and its role. */
public record Principal(String name, Role role) {}
