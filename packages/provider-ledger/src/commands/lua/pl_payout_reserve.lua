-- Reserve a provider's whole available balance for one payout, when it is at least the minimum
-- and above zero: available -> reserved, and a payout record in state `reserved`.
-- KEYS[1]  provider balance hash
-- KEYS[2]  payout hash (new)
-- KEYS[3]  provider payouts zset
-- KEYS[4]  reserved payouts set
-- ARGV[1]  payout id   ARGV[2]  provider id   ARGV[3]  minimum, integer base units
-- ARGV[4]  created_at (RFC 3339)   ARGV[5]  created_at, unix ms
-- Returns the amount reserved (integer string), or '' when nothing was reserved.
local b = redis.call('HMGET', KEYS[1], 'available', 'address')
local available = b[1] or '0'
local min = ARGV[3]
-- integer strings without leading zeros: compare by length, then lexically
local below = #available < #min or (#available == #min and available < min)
if available == '0' or below or not b[2] then return '' end
redis.call('HINCRBY', KEYS[1], 'available', '-' .. available)
redis.call('HINCRBY', KEYS[1], 'reserved', available)
redis.call('HSET', KEYS[2], 'payout_id', ARGV[1], 'provider_id', ARGV[2], 'address', b[2], 'amount', available,
  'status', 'reserved', 'created_at', ARGV[4], 'created_at_ms', ARGV[5])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
return available
