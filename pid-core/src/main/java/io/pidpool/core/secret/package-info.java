/**
 * Account passwords at rest: {@link io.pidpool.core.secret.SecretSealer} seals them with AES-GCM under
 * a rotating keyring into {@link io.pidpool.core.model.SealedSecret}s and opens them again. Pure JDK
 * ({@code javax.crypto}).
 */
package io.pidpool.core.secret;
