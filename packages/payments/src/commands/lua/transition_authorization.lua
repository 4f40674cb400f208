-- Move a reserved authorization from one state to the next, only if it is still held by the
-- same operation and in an expected state (compare-and-set). Releasing one is
-- release_authorization.lua.
-- States: pending -> settled -> completed (pending -> completed when the settlement and the stored
-- answer are written together); a deferred scheme: pending -> settling (the intent) -> settled ->
-- completed, or settling -> completed when the answer is stored right after the settlement;
-- pending -> settle_unknown (outcome not seen) -> settled;
-- settled/pending/settle_unknown -> recovering -> completed (the recovery sweep, after a crash).
-- KEYS[1]  authorization key (hash)
-- KEYS[2]  in-flight set: left on `completed`, progress time updated otherwise
-- ARGV[1]  operation id that must hold it
-- ARGV[2]  expected states, comma-separated (e.g. "pending,settle_unknown")
-- ARGV[3]  new state
-- ARGV[4]  now, unix milliseconds
-- ARGV[5..] field, value pairs to store with the new state
-- Returns 1 when applied, 0 when the holder or the state did not match.
local v = redis.call('HMGET', KEYS[1], 'state', 'operation_id')
if not v[1] or v[2] ~= ARGV[1] then return 0 end
local ok = false
for s in string.gmatch(ARGV[2], '([^,]+)') do
  if s == v[1] then ok = true end
end
if not ok then return 0 end
-- one HSET with the state and every field
local fields = {'state', ARGV[3], 'updated_at', ARGV[4]}
for i = 5, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
redis.call('HSET', KEYS[1], unpack(fields))
if ARGV[3] == 'completed' then
  redis.call('ZREM', KEYS[2], KEYS[1])
else
  redis.call('ZADD', KEYS[2], tonumber(ARGV[4]), KEYS[1])
end
return 1
