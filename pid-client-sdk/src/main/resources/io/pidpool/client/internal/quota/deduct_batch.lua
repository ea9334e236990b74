-- Many deductions in one call (the coalesced permits of many threads), in groups of one shard each.
-- On Redis Cluster a call holds one group (all its keys share the shard's hash tag); on a single
-- Redis (or a master with replicas) one call holds every group of a batch: one script run per round
-- trip instead of one per shard.
-- Within a group each deduction is decided exactly as deduct() would, in order (an id repeated in the
-- batch answers "granted before"). What costs Redis per deduction is kept to the minimum; the rest is
-- done once per group or per month hash ("usage"):
--   per usage:     one HGET of the PID's limit, one HMGET of 'used' and every d:<id> asked, one HSET
--                  of 'used' and the new d:<id> records, one HSET of the index, EXPIREATs;
--   per group:     one HINCRBY of the client's sequence for all grants (a contiguous range), and ONE
--                  stream entry (kind 'B') carrying every grant of the group, one line each, numbered
--                  q, q+1, ... in line order (UsageEventLog expands it into one event per deduction).
-- KEYS: per group: pids, events, seq, then per usage: usage hash, its month's index
-- ARGV: clientId, incarnationCandidate, expireAt, groupCount, then per group: usageCount,
--       deductionCount, then per usage: pid, month, then per deduction: usage number (1-based within
--       the group), deductionId, amount (a decimal as Long.toString writes it)
-- Returns per deduction, flattened, in ARGV order: a grant as 4 fields {1, usedAfter, limit, epoch}
-- (usedAfter is the usage after it, the limit it was granted under is the current one); anything
-- else as the 8 fields of deduct() (the sequence number is 0 there: the stream entry carries it).
-- The short grant halves the reply of a batch, most of whose deductions are grants.
-- Batch entry fields: k=B, c=client, i=incarnation, q=first sequence number, e=lines joined by '\n',
--   each line "pid|month|deductionId|amount|usedAfter|limit" (ids and PIDs never contain '|' or '\n').
local client, inc_candidate, expire_at = ARGV[1], ARGV[2], ARGV[3]
local flat, nflat = {}, 0

-- HSET/HMGET with many fields, in slices that stay within Lua's C stack for unpack()
local function call_many(cmd, key, list, out)
  local n = #list
  if n <= 4000 then
    local r = redis.call(cmd, key, unpack(list))
    if out then
      for i = 1, #r do
        out[#out + 1] = r[i]
      end
    end
    return
  end
  for s = 1, n, 4000 do
    local r = redis.call(cmd, key, unpack(list, s, math.min(s + 3999, n)))
    if out then
      for i = 1, #r do
        out[#out + 1] = r[i]
      end
    end
  end
end

local function deduct_group(k, a)
  local pids_key, events_key, seq_key = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local nu, nd = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  local usages, limits = {}, {}
  local index_writes, index_order = {}, {} -- several PIDs of one month share the shard's index
  for j = 1, nu do
    local pid = ARGV[a]
    local lim = limits[pid]
    if not lim then
      local l, e = pid_meta(pids_key, pid)
      lim = {l, e, '|' .. fmt(l)}
      limits[pid] = lim
    end
    usages[j] = {
      key = KEYS[k + 1 + 2 * j], index = KEYS[k + 2 + 2 * j],
      pid = pid, prefix = pid .. '|' .. ARGV[a + 1] .. '|',
      limit = lim[1], epoch = lim[2], lsuffix = lim[3],
      ask = {'used'}, pending = {}, writes = {},
    }
    if not index_writes[usages[j].index] then
      index_writes[usages[j].index] = {}
      index_order[#index_order + 1] = usages[j].index
    end
    usages[j].ix = index_writes[usages[j].index]
    a = a + 2
  end
  -- one HMGET per month hash: 'used' and the record of every deduction id asked
  local uno, field, pos = {}, {}, {}
  for i = 1, nd do
    local b = a + 3 * (i - 1)
    local j = tonumber(ARGV[b])
    local f = 'd:' .. ARGV[b + 1]
    local ask = usages[j].ask
    ask[#ask + 1] = f
    uno[i], field[i], pos[i] = j, f, #ask
  end
  for j = 1, nu do
    local u = usages[j]
    local got = {}
    call_many('HMGET', u.key, u.ask, got)
    u.got = got
    u.used = tonumber(got[1] or '0')
  end
  local lines = {}
  for i = 1, nd do
    local b = a + 3 * (i - 1)
    local u = usages[uno[i]]
    local f, did, amount_s = field[i], ARGV[b + 1], ARGV[b + 2]
    local amount = tonumber(amount_s)
    local prev = u.pending[f] or u.got[pos[i]]
    local at = nflat
    if prev then
      local pa, pu, pl = parse_deduction(prev)
      if pa == amount then
        flat[at + 1], flat[at + 2], flat[at + 3], flat[at + 4] = 2, pa, pu, pl
      else
        flat[at + 1], flat[at + 2], flat[at + 3], flat[at + 4] = 3, amount, 0, 0
      end
      flat[at + 5], flat[at + 6], flat[at + 7], flat[at + 8] = u.used, u.limit, u.epoch, 0
      nflat = at + 8
    elseif amount > u.limit - u.used then
      flat[at + 1], flat[at + 2], flat[at + 3], flat[at + 4] = 4, amount, 0, 0
      flat[at + 5], flat[at + 6], flat[at + 7], flat[at + 8] = u.used, u.limit, u.epoch, 0
      nflat = at + 8
    else
      local used = u.used + amount
      u.used = used
      local used_s = fmt(used)
      local record = amount_s .. '|' .. used_s .. u.lsuffix .. '|0'
      u.pending[f] = record
      local w = u.writes
      w[#w + 1] = f
      w[#w + 1] = record
      local ix = u.ix
      ix[#ix + 1] = did
      ix[#ix + 1] = u.pid
      lines[#lines + 1] = u.prefix .. did .. '|' .. amount_s .. '|' .. used_s .. u.lsuffix
      flat[at + 1], flat[at + 2], flat[at + 3], flat[at + 4] = 1, used, u.limit, u.epoch
      nflat = at + 4
    end
  end

  if #lines > 0 then
    for j = 1, nu do
      local u = usages[j]
      if #u.writes > 0 then
        local w = u.writes
        w[#w + 1] = 'used'
        w[#w + 1] = fmt(u.used)
        call_many('HSET', u.key, w)
        redis.call('EXPIREAT', u.key, expire_at)
      end
    end
    for _, key in ipairs(index_order) do
      local ix = index_writes[key]
      if #ix > 0 then
        call_many('HSET', key, ix)
        redis.call('EXPIREAT', key, expire_at)
      end
    end
    local inc = redis.call('HGET', seq_key, '~inc')
    if not inc then
      inc = inc_candidate
      redis.call('HSET', seq_key, '~inc', inc)
    end
    local n = #lines
    local first = redis.call('HINCRBY', seq_key, client, n) - n + 1
    redis.call('XADD', events_key, '*',
      'k', 'B', 'c', client, 'i', inc, 'q', fmt(first), 'e', table.concat(lines, '\n'))
  end
  return k + 3 + 2 * nu, a + 3 * nd
end

local k, a = 1, 5
for _ = 1, tonumber(ARGV[4]) do
  k, a = deduct_group(k, a)
end
return flat
