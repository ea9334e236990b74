-- PidPool quota scripts: helpers prepended to every script (see docs/quota.md).
-- All numbers stay far below 2^53, so Lua's doubles hold them exactly.

local function fmt(n)
  return string.format('%d', n)
end

-- pids hash: pid -> "limit|epoch"; a PID without an entry (or with a malformed one, written by
-- something else than these scripts) has limit 0 and epoch 0: nothing is granted.
local function pid_meta(pids_key, pid)
  local v = redis.call('HGET', pids_key, pid)
  if not v then
    return 0, 0
  end
  local limit, epoch = string.match(v, '^(%d+)|(%d+)$')
  if not limit then
    return 0, 0
  end
  return tonumber(limit), tonumber(epoch)
end

local function month_used(usage_key)
  return tonumber(redis.call('HGET', usage_key, 'used') or '0')
end

-- d:<deductionId> -> "amount|usedAfter|limit|refunded"
local function parse_deduction(v)
  local a, u, l, r = string.match(v, '^(%d+)|(%d+)|(%d+)|(%d+)$')
  return tonumber(a), tonumber(u), tonumber(l), tonumber(r)
end

-- r:<refundId> -> "deductionId|amount|refundedTotal|deductionAmount|usedAfter"
local function parse_refund(v)
  local d, a, t, da, u = string.match(v, '^([^|]+)|(%d+)|(%d+)|(%d+)|(%d+)$')
  return d, tonumber(a), tonumber(t), tonumber(da), tonumber(u)
end

-- Appends one usage event to the shard's stream, numbered by the client's next sequence number.
-- The incarnation names this life of the sequence hash: if Redis ever loses it, numbers restart
-- under a new incarnation instead of silently repeating old ones.
local function emit(events_key, seq_key, client, inc_candidate, kind, pid, month, did, rid, amount, used, limit)
  local inc = redis.call('HGET', seq_key, '~inc')
  if not inc then
    inc = inc_candidate
    redis.call('HSET', seq_key, '~inc', inc)
  end
  local seq = redis.call('HINCRBY', seq_key, client, 1)
  redis.call('XADD', events_key, '*',
    'k', kind, 'pid', pid, 'm', month, 'd', did, 'r', rid,
    'n', fmt(amount), 'u', fmt(used), 'l', fmt(limit), 'c', client, 'q', fmt(seq), 'i', inc)
  return seq
end

-- One deduction, by the MonthLedger rules. Returns
-- {code, amount, usedAfter, limitAtGrant, used, limit, epoch, seq};
-- code 1 granted, 2 granted before (a retry: the original grant), 3 id reused with another amount,
-- 4 quota exhausted. Only code 1 changes anything.
local function deduct(pids_key, usage_key, index_key, events_key, seq_key,
                      pid, month, did, amount, expire_at, client, inc)
  local limit, epoch = pid_meta(pids_key, pid)
  local used = month_used(usage_key)
  local prev = redis.call('HGET', usage_key, 'd:' .. did)
  if prev then
    local a, u, l = parse_deduction(prev)
    if a == amount then
      return {2, a, u, l, used, limit, epoch, 0}
    end
    return {3, amount, 0, 0, used, limit, epoch, 0}
  end
  if amount > limit - used then
    return {4, amount, 0, 0, used, limit, epoch, 0}
  end
  used = used + amount
  redis.call('HSET', usage_key, 'used', fmt(used),
    'd:' .. did, fmt(amount) .. '|' .. fmt(used) .. '|' .. fmt(limit) .. '|0')
  redis.call('EXPIREAT', usage_key, expire_at)
  if index_key then
    redis.call('HSET', index_key, did, pid)
    redis.call('EXPIREAT', index_key, expire_at)
  end
  local seq = emit(events_key, seq_key, client, inc, 'D', pid, month, did, '', amount, used, limit)
  return {1, amount, used, limit, used, limit, epoch, seq}
end
