-- Renew or expire one wallet-monitor subscription whose term has ended (docs/spec-notes.md 3: "renews
-- automatically while the caller's metered account has balance").
-- KEYS[1]  subscription hash (fields `status`, `expires_at`, `renewals`)
-- KEYS[2]  the owner's metered account hash (field `balance`, integer USDC base units)
-- KEYS[3]  expiry sorted set (member: subscription id, score: expires_at)
-- ARGV[1]  now, UNIX seconds
-- ARGV[2]  term, seconds (30 days)
-- ARGV[3]  balance needed to renew, integer base units
-- ARGV[4]  subscription id
-- Returns {result, expires_at}: `missing` (no such hash; removed from the set), `inactive`
-- (cancelled or expired; removed from the set), `not_due` (expires_at is still ahead), `renewed`
-- (expires_at moved forward by whole terms until it is after now) or `expired` (balance too low).
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  redis.call('ZREM', KEYS[3], ARGV[4])
  return {'missing', ''}
end
if status ~= 'active' then
  redis.call('ZREM', KEYS[3], ARGV[4])
  return {'inactive', redis.call('HGET', KEYS[1], 'expires_at') or ''}
end
local now = tonumber(ARGV[1])
local expires = tonumber(redis.call('HGET', KEYS[1], 'expires_at'))
if expires > now then
  redis.call('ZADD', KEYS[3], expires, ARGV[4])
  return {'not_due', tostring(expires)}
end
local balance = tonumber(redis.call('HGET', KEYS[2], 'balance') or '0')
if balance >= tonumber(ARGV[3]) then
  local term = tonumber(ARGV[2])
  while expires <= now do
    expires = expires + term
  end
  redis.call('HSET', KEYS[1], 'expires_at', tostring(expires))
  redis.call('HINCRBY', KEYS[1], 'renewals', 1)
  redis.call('ZADD', KEYS[3], expires, ARGV[4])
  return {'renewed', tostring(expires)}
end
redis.call('HSET', KEYS[1], 'status', 'expired')
redis.call('ZREM', KEYS[3], ARGV[4])
return {'expired', tostring(expires)}
