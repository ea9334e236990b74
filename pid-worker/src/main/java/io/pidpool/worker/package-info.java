/** PidPool worker. */
package io.pidpool.worker;
