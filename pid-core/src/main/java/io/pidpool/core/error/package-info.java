/** The single exception hierarchy of PidPool: {@link io.pidpool.core.error.PidPoolException} with an {@link io.pidpool.core.error.ErrorCode}. */
package io.pidpool.core.error;
