package io.pidpool.server.config;

/**
 * One bearer token of the operator API.
 *
 * @param name who uses it, as written into the audit trail ({@code requestedBy}); defaults to
 *     {@code <role>-<index>}
 * @param token the secret itself; never logged
 * @param role what it may do
 */
public record TokenConfig(String name, String token, Role role) {
    @Override
    public String toString() {
        return "TokenConfig[name=" + name + ", role=" + role + ", token=***]";
    }
}
