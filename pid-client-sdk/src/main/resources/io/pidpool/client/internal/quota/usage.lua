-- KEYS: pids, usage. ARGV: pid. Returns {used, limit, epoch}.
local limit, epoch = pid_meta(KEYS[1], ARGV[1])
return {month_used(KEYS[2]), limit, epoch}
