-- The operator's RESET_QUOTA of one PID's month: usage back to 0, the PID's epoch bumped (so near
-- caches holding an older observation stop trusting it), a reset event appended. The deduction and
-- refund records stay, so their ids still deduplicate after the reset; every deduction present is
-- marked p:<deductionId> ("before a reset"), and a later refund of it leaves the new usage alone
-- (docs/quota.md §2a). The marking visits the month's fields once: a rare operator write. KEYS: pids, usage, events, seq[, resetGenerations]. ARGV: pid, month, clientId,
-- incarnationCandidate[, generation].
-- With the optional fifth key and argument the reset is guarded: it happens only if the PID's recorded
-- reset generation (a hash next to the counters, same hash tag) is below the given one, and records it
-- in the same step, so the same reset applied again (a retry, a new leader's reconciliation) is a
-- no-op. Returns {newPidValue, seq}, or {currentPidValue, -1} when the generation was applied before.
if KEYS[5] then
  local done = tonumber(redis.call('HGET', KEYS[5], ARGV[1]) or '0') or 0
  if done >= tonumber(ARGV[5]) then
    return {redis.call('HGET', KEYS[1], ARGV[1]) or '', -1}
  end
  redis.call('HSET', KEYS[5], ARGV[1], ARGV[5])
end
local limit, epoch = pid_meta(KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 1 then
  local fields = redis.call('HKEYS', KEYS[2])
  for i = 1, #fields do
    local f = fields[i]
    if string.sub(f, 1, 2) == 'd:' then
      redis.call('HSET', KEYS[2], 'p:' .. string.sub(f, 3), '1')
    end
  end
  redis.call('HSET', KEYS[2], 'used', '0')
end
local value = fmt(limit) .. '|' .. fmt(epoch + 1)
redis.call('HSET', KEYS[1], ARGV[1], value)
local seq = emit(KEYS[3], KEYS[4], ARGV[3], ARGV[4], 'X', ARGV[1], ARGV[2], '', '', 0, 0, limit)
return {value, seq}
