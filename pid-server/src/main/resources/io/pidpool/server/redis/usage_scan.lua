-- One page of a shard's usage, for the leader's full scan (RedisUsageReader).
-- KEYS[1]  the shard's pids hash (pid -> "limit|epoch")
-- ARGV[1]  the shard's usage key prefix "pidpool:{<cluster>:<shard>}:u:"
-- ARGV[2]  the month suffix ":<yyyy-MM>"
-- ARGV[3]  HSCAN cursor ("0" to start)
-- ARGV[4]  HSCAN COUNT hint
-- Returns {nextCursor, pid, used, pid, used, ...}; used is "" when the PID has no counter
-- this month. Every usage key carries the shard's hash tag, so all keys read here are in KEYS[1]'s
-- Redis Cluster slot. Read-only.
local page = redis.call('HSCAN', KEYS[1], ARGV[3], 'COUNT', ARGV[4])
local entries = page[2]
local out = {page[1]}
local n = 1
for i = 1, #entries, 2 do
    local pid = entries[i]
    local used = redis.call('HGET', ARGV[1] .. pid .. ARGV[2], 'used')
    out[n + 1] = pid
    out[n + 2] = used or ''
    n = n + 2
end
return out
