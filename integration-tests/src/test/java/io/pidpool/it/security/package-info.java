/**
 * Security end to end: a canary password planted through the HTTP API must reach a real SDK client
 * and nowhere else in clear (logs, API responses, ZooKeeper, Redis, database); ZooKeeper digest ACLs;
 * Redis with a password; key rotation with a re-seal.
 */
package io.pidpool.it.security;
