-- Cancel a wallet-monitor subscription, owner only, idempotent.
-- KEYS[1]  subscription hash (fields `owner` (any case), `status`, `cancelled_at`, ...)
-- KEYS[2]  expiry sorted set (member: subscription id, score: expires_at)
-- ARGV[1]  caller address (lowercase)
-- ARGV[2]  now, UNIX seconds
-- ARGV[3]  subscription id
-- Returns {result, cancelled_at}: result `not_found`, `forbidden` (another owner), `cancelled`
-- (this call cancelled it) or `already` (it was cancelled before; cancelled_at is the first one).
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then
  return {'not_found', ''}
end
if string.lower(owner) ~= ARGV[1] then
  return {'forbidden', ''}
end
if redis.call('HGET', KEYS[1], 'status') == 'cancelled' then
  return {'already', redis.call('HGET', KEYS[1], 'cancelled_at') or ''}
end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'cancelled_at', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[3])
return {'cancelled', ARGV[2]}
