-- Debit a metered account atomically; never below zero; at most once per reference.
-- KEYS[1]  account hash (field `balance`, integer USDC base units)
-- KEYS[2]  usage list (newest first, capped)
-- KEYS[3]  reference key (marks this debit as done)
-- ARGV[1]  amount, integer base units (> 0)
-- ARGV[2]  usage line (JSON)
-- ARGV[3]  max usage lines kept
-- ARGV[4]  reference ttl, seconds
-- Returns {status, balance}: status 1 debited, 0 insufficient (nothing changed), 2 already debited.
if redis.call('EXISTS', KEYS[3]) == 1 then
  return {2, redis.call('HGET', KEYS[1], 'balance') or '0'}
end
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
local amount = tonumber(ARGV[1])
if amount <= 0 or balance < amount then
  return {0, tostring(balance)}
end
local after = redis.call('HINCRBY', KEYS[1], 'balance', -amount)
redis.call('HINCRBY', KEYS[1], 'spent', amount)
redis.call('LPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
redis.call('SET', KEYS[3], '1', 'EX', tonumber(ARGV[4]))
return {1, tostring(after)}
