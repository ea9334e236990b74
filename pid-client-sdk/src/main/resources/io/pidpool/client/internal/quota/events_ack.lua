-- KEYS: offsets. ARGV: consumer, entryId. Moves the consumer's offset forward only; returns it.
local function parse(id)
  local ms, sq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(sq)
end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local cm, cs = parse(cur)
  local nm, ns = parse(ARGV[2])
  if nm < cm or (nm == cm and ns <= cs) then
    return cur
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return ARGV[2]
