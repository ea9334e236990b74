-- KEYS: layout. ARGV: the layout this process uses. Records it if absent; returns the recorded one.
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return v
