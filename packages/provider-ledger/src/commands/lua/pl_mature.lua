-- Move one held ledger entry to available once its dispute window has passed, unless it is
-- disputed (an open dispute keeps the share held; its resolution moves it).
-- KEYS[1]  ledger entry hash
-- KEYS[2]  provider balance hash
-- KEYS[3]  provider maturing zset
-- ARGV[1]  execution id
-- ARGV[2]  now, unix ms
-- Returns 1 when moved, 0 otherwise (not yet due; or disputed/moved/missing: then it leaves the zset).
local e = redis.call('HMGET', KEYS[1], 'status', 'matures_at', 'dispute_id', 'share')
if e[1] ~= 'held' or e[3] then
  redis.call('ZREM', KEYS[3], ARGV[1])
  return 0
end
if tonumber(e[2]) > tonumber(ARGV[2]) then return 0 end
local share = e[4]
redis.call('HSET', KEYS[1], 'status', 'available')
if share ~= '0' then
  redis.call('HINCRBY', KEYS[2], 'held', '-' .. share)
  redis.call('HINCRBY', KEYS[2], 'available', share)
end
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
