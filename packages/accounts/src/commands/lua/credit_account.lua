-- Credit a metered account at most once per reference (e.g. the deposit's execution id).
-- KEYS[1]  account hash
-- KEYS[2]  usage list
-- KEYS[3]  reference key
-- ARGV[1]  amount, integer base units (> 0)
-- ARGV[2]  usage line (JSON)
-- ARGV[3]  max usage lines kept
-- ARGV[4]  reference ttl, seconds
-- Returns {status, balance}: status 1 credited, 2 already credited.
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {2, redis.call('HGET', KEYS[1], 'balance') or '0'}
end
local after = redis.call('HINCRBY', KEYS[1], 'balance', tonumber(ARGV[1]))
redis.call('HINCRBY', KEYS[1], 'deposited', tonumber(ARGV[1]))
redis.call('LPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
redis.call('SET', KEYS[3], '1', 'EX', tonumber(ARGV[4]))
return {1, tostring(after)}
