-- KEYS: events. ARGV: afterId (exclusive), count. Returns XRANGE entries after the id.
return redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+', 'COUNT', ARGV[2])
