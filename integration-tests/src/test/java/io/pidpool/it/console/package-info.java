/**
 * The operator web console in a real browser: headless Chromium driven through Selenium against a
 * real standalone stack (embedded ZooKeeper and Redis, H2) with real SDK clients holding the PIDs.
 */
package io.pidpool.it.console;
