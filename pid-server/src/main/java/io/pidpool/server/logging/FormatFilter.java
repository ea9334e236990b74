package io.pidpool.server.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;

/**
 * Lets an appender write only when it is the chosen log format: {@code logback.xml} has one
 * appender per format ({@code text}, {@code json}), both referenced, each with this filter. Both
 * stay referenced because logback warns about an unreferenced appender, and a warning makes it print
 * its whole status report on standard output, which must carry only the ready line.
 *
 * <p>Configured as {@code <filter class="..."><format>json</format><selected>${...}</selected></filter>}.
 */
public final class FormatFilter extends Filter<ILoggingEvent> {
    private volatile boolean selected;
    private String format;
    private String chosen;

    public void setFormat(String format) {
        this.format = format;
    }

    public void setSelected(String chosen) {
        this.chosen = chosen;
    }

    @Override
    public void start() {
        selected = format != null && format.trim().equalsIgnoreCase(chosen == null ? "text" : chosen.trim());
        super.start();
    }

    @Override
    public FilterReply decide(ILoggingEvent event) {
        return selected ? FilterReply.NEUTRAL : FilterReply.DENY;
    }
}
