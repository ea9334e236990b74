-- KEYS: pids. ARGV: pid, limit. Sets the PID's hard limit and bumps its epoch; returns the new value.
local limit, epoch = pid_meta(KEYS[1], ARGV[1])
local value = ARGV[2] .. '|' .. fmt(epoch + 1)
redis.call('HSET', KEYS[1], ARGV[1], value)
return value
