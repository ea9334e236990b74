/** The PidPool cluster server: entry point and wiring of the adapters. */
package io.pidpool.server;
