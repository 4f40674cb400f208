-- Record a payout found on chain (a tagged treasury transfer, see payoutChain.ts) that Redis does
-- not know as sent, e.g. after Redis lost its last writes, so it is never paid a second time.
-- KEYS[1]  payout hash
-- KEYS[2]  provider balance hash
-- KEYS[3]  provider payouts zset
-- KEYS[4]  reserved payouts set
-- ARGV[1]  payout id   ARGV[2]  provider id   ARGV[3]  address   ARGV[4]  amount on chain (integer base units)
-- ARGV[5]  tx hash   ARGV[6]  at (RFC 3339)   ARGV[7]  at, unix ms
-- Returns 'known' (recorded sent already; its tx hash follows the chain's), 'settled' (it was
-- `reserved`: reserved -> paid, as a mined payout), 'adopted' (unknown or `failed`: available ->
-- paid, record `sent`), or 'short' (unknown and the available balance is below the amount: nothing
-- changed, an operator must decide).
local p = redis.call('HMGET', KEYS[1], 'status', 'amount')
if p[1] == 'sent' then
  redis.call('HSET', KEYS[1], 'tx_hash', ARGV[5])
  return 'known'
end
if p[1] == 'reserved' then
  local amount = p[2]
  if amount ~= '0' then redis.call('HINCRBY', KEYS[2], 'reserved', '-' .. amount) end
  redis.call('HINCRBY', KEYS[2], 'paid', amount)
  redis.call('HSET', KEYS[1], 'status', 'sent', 'sent_at', ARGV[6], 'tx_hash', ARGV[5])
  redis.call('SREM', KEYS[4], ARGV[1])
  return 'settled'
end
local available = redis.call('HGET', KEYS[2], 'available') or '0'
local amount = ARGV[4]
-- integer strings without leading zeros: compare by length, then lexically
local below = available:sub(1, 1) == '-' or #available < #amount or (#available == #amount and available < amount)
if below then return 'short' end
redis.call('HINCRBY', KEYS[2], 'available', '-' .. amount)
redis.call('HINCRBY', KEYS[2], 'paid', amount)
redis.call('HSET', KEYS[1], 'payout_id', ARGV[1], 'provider_id', ARGV[2], 'address', ARGV[3], 'amount', amount,
  'status', 'sent', 'created_at', ARGV[6], 'created_at_ms', ARGV[7], 'sent_at', ARGV[6], 'tx_hash', ARGV[5], 'adopted', '1')
redis.call('ZADD', KEYS[3], ARGV[7], ARGV[1])
return 'adopted'
