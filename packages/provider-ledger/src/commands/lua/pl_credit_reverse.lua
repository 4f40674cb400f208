-- Reverse a provider's credit for an execution whose payment is being refunded (the paywall's
-- refund decision, or the crash-recovery sweep): the share is cancelled (held, or available when
-- the balance still holds it), the fee reversed and the price counted as refunded, in one step, so
-- a dispute can never refund the same payment again. Without an entry, a tombstone (status
-- `refunded`, zero amounts, kept `ARGV[5]` seconds) stops a late credit of that execution.
-- KEYS[1]  ledger entry hash of the execution
-- KEYS[2]  provider balance hash (of ARGV[1])
-- KEYS[3]  provider maturing zset
-- KEYS[4]  ledger totals hash
-- KEYS[5]  open disputes zset
-- KEYS[6]  dispute hash (of ARGV[2])
-- ARGV[1]  provider id the caller read ('' when no entry)   ARGV[2]  dispute id it read ('' when none)
-- ARGV[3]  now (RFC 3339)                                   ARGV[4]  execution id
-- ARGV[5]  tombstone ttl, seconds
-- Returns {'reversed'}, {'tombstone'}, {'already_refunded', 'dispute' | 'reversal'}, {'paid_out'}
-- (the share left the available balance: nothing changed) or {'retry'} (the entry changed since read).
local e = redis.call('HMGET', KEYS[1], 'status', 'provider_id', 'dispute_id', 'share', 'fee', 'price', 'reversed_at')
if not e[1] then
  redis.call('HSET', KEYS[1], 'execution_id', ARGV[4], 'status', 'refunded', 'price', '0', 'share', '0', 'fee', '0', 'reversed_at', ARGV[3])
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
  return {'tombstone'}
end
if (e[2] or '') ~= ARGV[1] or (e[3] or '') ~= ARGV[2] then return {'retry'} end
if e[1] == 'refunded' then
  if e[7] then return {'already_refunded', 'reversal'} end
  return {'already_refunded', 'dispute'}
end
local share, fee, price = e[4], e[5], e[6]
local neg = function(v) if v == '0' then return '0' end return '-' .. v end
if e[1] == 'held' then
  redis.call('HINCRBY', KEYS[2], 'held', neg(share))
else
  local available = redis.call('HGET', KEYS[2], 'available') or '0'
  -- integer strings of up to 15 digits compare exactly as Lua numbers
  if tonumber(available) < tonumber(share) then return {'paid_out'} end
  redis.call('HINCRBY', KEYS[2], 'available', neg(share))
end
redis.call('HINCRBY', KEYS[4], 'fees', neg(fee))
redis.call('HINCRBY', KEYS[4], 'refunded', price)
redis.call('HSET', KEYS[1], 'status', 'refunded', 'reversed_at', ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[4])
if ARGV[2] ~= '' and redis.call('HGET', KEYS[6], 'status') == 'open' then
  -- the payment's own refund pays the payer: the dispute closes without a second refund
  redis.call('HSET', KEYS[6], 'status', 'refunded', 'resolved_at', ARGV[3], 'resolved_by', 'reversal')
  redis.call('ZREM', KEYS[5], ARGV[2])
end
return {'reversed'}
