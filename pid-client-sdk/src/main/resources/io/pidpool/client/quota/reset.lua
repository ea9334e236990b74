-- The operator's RESET_QUOTA of one PID's month: usage, deductions and refunds forgotten, the
-- PID's epoch bumped (so near caches holding an older observation stop trusting it), a reset event
-- appended. KEYS: pids, usage, events, seq. ARGV: pid, month, clientId, incarnationCandidate.
-- Returns {newPidValue, seq}.
local limit, epoch = pid_meta(KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
local value = fmt(limit) .. '|' .. fmt(epoch + 1)
redis.call('HSET', KEYS[1], ARGV[1], value)
local seq = emit(KEYS[3], KEYS[4], ARGV[3], ARGV[4], 'X', ARGV[1], ARGV[2], '', '', 0, 0, limit)
return {value, seq}
