/**
 * ZooKeeper fixtures for the scenarios: loopback servers and ensembles, a probe that brackets when
 * a node vanished, server-side session termination, and ensemble-leader lookup.
 */
package io.pidpool.it.zk;
