-- KEYS: pids, usage, events, seq
-- ARGV: pid, month, deductionId, refundId, amount, expireAt, clientId, incarnationCandidate
-- Returns {code, amount, refundedTotal, deductionAmount, usedAfter, used, limit, epoch, seq};
-- code 1 applied, 2 applied before (a retry: the original answer), 3 refund id used for this
-- deduction with another amount, 4 unknown deduction, 5 would exceed the deduction. Only code 1 changes anything.
-- A refund of a deduction marked p:<id> by a reset is recorded without lowering the usage.
local pid, month, did, rid = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local amount = tonumber(ARGV[5])
local limit, epoch = pid_meta(KEYS[1], pid)
local used = month_used(KEYS[2])
local dv = redis.call('HGET', KEYS[2], 'd:' .. did)
local da, du, dl, dr = 0, 0, 0, 0
if dv then
  da, du, dl, dr = parse_deduction(dv)
end
-- a refund id is scoped to its deduction: r:<deductionId>:<refundId> (ids never contain ':').
-- Records written before that scope are r:<refundId>; one naming this deduction still counts.
local rfield = 'r:' .. did .. ':' .. rid
local rv = redis.call('HGET', KEYS[2], rfield)
if not rv then
  local legacy = redis.call('HGET', KEYS[2], 'r:' .. rid)
  if legacy and parse_refund(legacy) == did then
    rv = legacy
  end
end
if rv then
  local rd, ra, rt, rda, ru = parse_refund(rv)
  if ra == amount then
    return {2, ra, rt, rda, ru, used, limit, epoch, 0}
  end
  return {3, amount, dr, da, 0, used, limit, epoch, 0}
end
if not dv then
  return {4, amount, 0, 0, 0, used, limit, epoch, 0}
end
if amount > da - dr then
  return {5, amount, dr, da, 0, used, limit, epoch, 0}
end
dr = dr + amount
-- a deduction made before a reset: the reset gave its usage back already
if redis.call('HEXISTS', KEYS[2], 'p:' .. did) == 0 then
  used = used - amount
end
redis.call('HSET', KEYS[2], 'used', fmt(used),
  'd:' .. did, fmt(da) .. '|' .. fmt(du) .. '|' .. fmt(dl) .. '|' .. fmt(dr),
  rfield, did .. '|' .. fmt(amount) .. '|' .. fmt(dr) .. '|' .. fmt(da) .. '|' .. fmt(used))
redis.call('EXPIREAT', KEYS[2], ARGV[6])
local seq = emit(KEYS[3], KEYS[4], ARGV[7], ARGV[8], 'R', pid, month, did, rid, amount, used, limit)
return {1, amount, dr, da, used, used, limit, epoch, seq}
