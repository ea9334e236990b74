-- KEYS: seq. Returns the shard's sequence hash: "~inc" -> incarnation, clientId -> last number.
return redis.call('HGETALL', KEYS[1])
