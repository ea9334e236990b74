/**
 * Secrets at rest: {@link io.pidpool.server.security.SecretRotation} reports which key sealed the
 * stored PID passwords and re-seals them under the current key of the keyring (docs/security.md).
 */
package io.pidpool.server.security;
