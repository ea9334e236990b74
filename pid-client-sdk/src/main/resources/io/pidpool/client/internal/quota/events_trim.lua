-- KEYS: events, offsets. Removes the entries every registered consumer has acknowledged.
-- Returns the number removed (0 while no consumer is registered).
local offsets = redis.call('HVALS', KEYS[2])
if #offsets == 0 then
  return 0
end
local min_ms, min_sq
for _, id in ipairs(offsets) do
  local ms, sq = string.match(id, '^(%d+)-(%d+)$')
  ms, sq = tonumber(ms), tonumber(sq)
  if not min_ms or ms < min_ms or (ms == min_ms and sq < min_sq) then
    min_ms, min_sq = ms, sq
  end
end
return redis.call('XTRIM', KEYS[1], 'MINID', fmt(min_ms) .. '-' .. fmt(min_sq + 1))
