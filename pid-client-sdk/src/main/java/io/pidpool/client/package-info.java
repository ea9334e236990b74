/** PidPool client. */
package io.pidpool.client;
