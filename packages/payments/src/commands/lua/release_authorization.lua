-- Release a reserved authorization (nothing was charged): delete it, only if it is still held by
-- the same operation and in one of the expected states (compare-and-set).
-- KEYS[1]  authorization key (hash)
-- KEYS[2]  in-flight set (the reservation leaves it)
-- ARGV[1]  operation id that must hold it
-- ARGV[2]  expected states, comma-separated (e.g. "pending,settle_unknown")
-- Returns 1 when released, 0 when the holder or the state did not match.
local v = redis.call('HMGET', KEYS[1], 'state', 'operation_id')
if not v[1] or v[2] ~= ARGV[1] then return 0 end
for s in string.gmatch(ARGV[2], '([^,]+)') do
  if s == v[1] then
    redis.call('DEL', KEYS[1])
    redis.call('ZREM', KEYS[2], KEYS[1])
    return 1
  end
end
return 0
