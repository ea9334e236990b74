-- KEYS: offsets. ARGV: consumer. Returns the consumer's acknowledged offset, or false.
return redis.call('HGET', KEYS[1], ARGV[1])
