-- Many deductions of one shard in one call (the coalesced permits of many threads).
-- KEYS: pids, events, seq, then per deduction: usage, index
-- ARGV: clientId, incarnationCandidate, then per deduction: pid, month, deductionId, amount, expireAt
-- Returns the 8 fields of deduct() per deduction, flattened, in order.
local out = {}
local count = (#ARGV - 2) / 5
for i = 0, count - 1 do
  local a = 3 + i * 5
  local r = deduct(KEYS[1], KEYS[4 + 2 * i], KEYS[5 + 2 * i], KEYS[2], KEYS[3],
    ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]), ARGV[a + 4], ARGV[1], ARGV[2])
  for j = 1, 8 do
    out[#out + 1] = r[j]
  end
end
return out
