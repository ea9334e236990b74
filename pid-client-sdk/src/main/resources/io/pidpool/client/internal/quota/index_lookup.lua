-- KEYS: index. ARGV: deductionId. Returns the PID of a permit deduction, or false.
return redis.call('HGET', KEYS[1], ARGV[1])
