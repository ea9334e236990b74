/** Logging configuration helpers referenced by {@code logback.xml}: the text/JSON format switch. */
package io.pidpool.server.logging;
