-- Many deductions in one call (the coalesced permits of many threads), in groups of one shard each.
-- On Redis Cluster a call holds one group (all its keys share the shard's hash tag); on a single
-- Redis (or a master with replicas) one call holds every group of a batch: one script run per round
-- trip instead of one per shard.
-- Within a group each deduction is decided exactly as deduct() would, in order; the group's writes
-- are then grouped: one HSET per touched usage hash and index, one EXPIREAT each, one HINCRBY of the
-- client's sequence of that shard for all its grants, and one XADD per grant (every change keeps its
-- own event).
-- KEYS: per group: pids, events, seq, then per deduction: usage, index
-- ARGV: clientId, incarnationCandidate, expireAt, groupCount, then per group: count, then per
--       deduction: pid, month, deductionId, amount
-- Returns the 8 fields of deduct() per deduction, flattened, in KEYS order.
local client, inc_candidate, expire_at = ARGV[1], ARGV[2], ARGV[3]

local function deduct_group(k, a, count, flat)
  local pids_key, events_key, seq_key = KEYS[k], KEYS[k + 1], KEYS[k + 2]
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
    local b = a + i * 4
    local pid, month, did, amount = ARGV[b], ARGV[b + 1], ARGV[b + 2], tonumber(ARGV[b + 3])
    local usage_key, index_key = KEYS[k + 3 + 2 * i], KEYS[k + 4 + 2 * i]
    local m = meta[pid]
    if not m then
      local l, e = pid_meta(pids_key, pid)
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
    local inc = redis.call('HGET', seq_key, '~inc')
    if not inc then
      inc = inc_candidate
      redis.call('HSET', seq_key, '~inc', inc)
    end
    local last = redis.call('HINCRBY', seq_key, client, #grants)
    local seq = last - #grants
    for _, g in ipairs(grants) do
      seq = seq + 1
      redis.call('XADD', events_key, '*',
        'k', 'D', 'pid', g[2], 'm', g[3], 'd', g[4], 'r', '',
        'n', fmt(g[5]), 'u', fmt(g[6]), 'l', fmt(g[7]), 'c', client, 'q', fmt(seq), 'i', inc)
      out[g[1]][8] = seq
    end
  end

  for i = 0, count - 1 do
    for j = 1, 8 do
      flat[#flat + 1] = out[i][j]
    end
  end
end

local flat = {}
local k, a = 1, 6
for _ = 1, tonumber(ARGV[4]) do
  local count = tonumber(ARGV[a - 1])
  deduct_group(k, a, count, flat)
  k = k + 3 + 2 * count
  a = a + 4 * count + 1
end
return flat
