package io.pidpool.core.id;

import java.time.Instant;

/**
 * The parts of one Snowflake id, as {@link SnowflakeIds#decode(long)} reads them back.
 *
 * @param timestampMillis epoch milliseconds (Unix epoch, not the generator's custom epoch)
 * @param datacenterId 0..31
 * @param workerId 0..31
 * @param sequence 0..4095, the id's position within its millisecond
 */
public record SnowflakeId(long id, long timestampMillis, int datacenterId, int workerId, int sequence) {
    public Instant timestamp() {
        return Instant.ofEpochMilli(timestampMillis);
    }
}
