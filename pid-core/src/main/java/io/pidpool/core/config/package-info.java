/** Configuration rules shared by the server and pid-worker processes. */
package io.pidpool.core.config;
