/**
 * pid-server processes in their own JVMs ({@link io.pidpool.it.server.ServerProcess}) and the
 * scenarios that kill them with SIGKILL ({@link io.pidpool.it.server.ServerKillIT}).
 */
package io.pidpool.it.server;
