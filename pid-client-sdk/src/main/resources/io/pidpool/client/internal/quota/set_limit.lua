-- KEYS: pids[, leader]. ARGV: pid, limit[, leader epoch]. Sets the PID's hard limit and bumps its
-- epoch; returns the new value.
-- With a leader epoch (the leader's writes, docs/quota.md §2a): `leader` holds the highest leader
-- epoch the shard has seen. An older epoch is refused with "fenced|<recorded>" and nothing changes;
-- a newer one is recorded in this same script. An empty pid only records the epoch (a new leader
-- fences every shard before its first limit write) and returns "leader|<epoch>".
if KEYS[2] then
  local recorded = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  local mine = tonumber(ARGV[3])
  if mine < recorded then
    return 'fenced|' .. fmt(recorded)
  end
  if mine > recorded then
    redis.call('SET', KEYS[2], fmt(mine))
  end
  if ARGV[1] == '' then
    return 'leader|' .. fmt(mine)
  end
end
local limit, epoch = pid_meta(KEYS[1], ARGV[1])
local value = ARGV[2] .. '|' .. fmt(epoch + 1)
redis.call('HSET', KEYS[1], ARGV[1], value)
return value
