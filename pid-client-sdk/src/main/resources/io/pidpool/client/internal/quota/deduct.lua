-- KEYS: pids, usage, events, seq[, index]
-- ARGV: pid, month, deductionId, amount, expireAt (unix seconds), clientId, incarnationCandidate
return deduct(KEYS[1], KEYS[2], KEYS[5], KEYS[3], KEYS[4],
  ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6], ARGV[7])
