-- Many deductions of one shard in one call (the coalesced permits of many threads). Each deduction
-- is decided exactly as deduct() would, in order; the writes are then grouped: one HSET per touched
-- usage hash and index, one EXPIREAT each, one HINCRBY of the client's sequence for all grants, and
-- one XADD per grant (every change keeps its own event).
-- KEYS: pids, events, seq, then per deduction: usage, index
-- ARGV: clientId, incarnationCandidate, expireAt, then per deduction: pid, month, deductionId, amount
-- Returns the 8 fields of deduct() per deduction, flattened, in order.
local client, inc_candidate, expire_at = ARGV[1], ARGV[2], ARGV[3]
local count = (#ARGV - 3) / 4
local meta, used, pending = {}, {}, {}
local writes, write_order = {}, {}
local grants, out = {}, {}

local function add_write(key, field, value)
  local w = writes[key]
  if not w then
    w = {}
    writes[key] = w
    write_order[#write_order + 1] = key
  end
  w[#w + 1] = field
  w[#w + 1] = value
end

for i = 0, count - 1 do
  local a = 4 + i * 4
  local pid, month, did, amount = ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3])
  local usage_key, index_key = KEYS[4 + 2 * i], KEYS[5 + 2 * i]
  local m = meta[pid]
  if not m then
    local l, e = pid_meta(KEYS[1], pid)
    m = {l, e}
    meta[pid] = m
  end
  local limit, epoch = m[1], m[2]
  local u = used[usage_key]
  if u == nil then
    u = month_used(usage_key)
  end
  local prev = pending[usage_key .. '\n' .. did] or redis.call('HGET', usage_key, 'd:' .. did)
  local r
  if prev then
    local pa, pu, pl = parse_deduction(prev)
    if pa == amount then
      r = {2, pa, pu, pl, u, limit, epoch, 0}
    else
      r = {3, amount, 0, 0, u, limit, epoch, 0}
    end
  elseif amount > limit - u then
    r = {4, amount, 0, 0, u, limit, epoch, 0}
  else
    u = u + amount
    local record = fmt(amount) .. '|' .. fmt(u) .. '|' .. fmt(limit) .. '|0'
    pending[usage_key .. '\n' .. did] = record
    add_write(usage_key, 'd:' .. did, record)
    add_write(index_key, did, pid)
    r = {1, amount, u, limit, u, limit, epoch, 0}
    grants[#grants + 1] = {i, pid, month, did, amount, u, limit}
  end
  used[usage_key] = u
  out[i] = r
end

if #grants > 0 then
  for key, u in pairs(used) do
    if writes[key] then
      add_write(key, 'used', fmt(u))
    end
  end
  for _, key in ipairs(write_order) do
    redis.call('HSET', key, unpack(writes[key]))
    redis.call('EXPIREAT', key, expire_at)
  end
  local inc = redis.call('HGET', KEYS[3], '~inc')
  if not inc then
    inc = inc_candidate
    redis.call('HSET', KEYS[3], '~inc', inc)
  end
  local last = redis.call('HINCRBY', KEYS[3], client, #grants)
  local seq = last - #grants
  for _, g in ipairs(grants) do
    seq = seq + 1
    redis.call('XADD', KEYS[2], '*',
      'k', 'D', 'pid', g[2], 'm', g[3], 'd', g[4], 'r', '',
      'n', fmt(g[5]), 'u', fmt(g[6]), 'l', fmt(g[7]), 'c', client, 'q', fmt(seq), 'i', inc)
    out[g[1]][8] = seq
  end
end

local flat = {}
for i = 0, count - 1 do
  for j = 1, 8 do
    flat[#flat + 1] = out[i][j]
  end
end
return flat
