-- Finish a reserved payout: `sent` (transfer mined) moves its amount reserved -> paid; `failed`
-- (transfer reverted, or never signed because it would revert) returns it reserved -> available.
-- KEYS[1]  payout hash
-- KEYS[2]  provider balance hash
-- KEYS[3]  reserved payouts set
-- ARGV[1]  outcome: sent | failed   ARGV[2]  at (RFC 3339)   ARGV[3]  payout id
-- ARGV[4]  tx hash ('' for none)
-- Returns 1 when settled now, 0 when the payout was not `reserved`.
local p = redis.call('HMGET', KEYS[1], 'status', 'amount')
if p[1] ~= 'reserved' then return 0 end
local amount = p[2]
if amount ~= '0' then redis.call('HINCRBY', KEYS[2], 'reserved', '-' .. amount) end
if ARGV[1] == 'sent' then
  redis.call('HINCRBY', KEYS[2], 'paid', amount)
  redis.call('HSET', KEYS[1], 'status', 'sent', 'sent_at', ARGV[2])
else
  redis.call('HINCRBY', KEYS[2], 'available', amount)
  redis.call('HSET', KEYS[1], 'status', 'failed', 'failed_at', ARGV[2])
end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'tx_hash', ARGV[4]) end
redis.call('SREM', KEYS[3], ARGV[3])
return 1
