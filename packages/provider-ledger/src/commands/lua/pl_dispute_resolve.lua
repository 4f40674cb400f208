-- Resolve an open dispute. `refund`: the share is cancelled (held -= share), the fee reversed
-- (fees -= fee) and the full price counted as refunded; the dispute joins the refunds-due set
-- until its on-chain refund is enqueued. `release`: the share becomes available at once.
-- KEYS[1]  dispute hash
-- KEYS[2]  ledger entry hash of its execution
-- KEYS[3]  provider balance hash
-- KEYS[4]  ledger totals hash
-- KEYS[5]  open disputes zset
-- KEYS[6]  refunds-due set
-- ARGV[1]  outcome: refund | release   ARGV[2]  resolved_by: admin | auto
-- ARGV[3]  resolved_at (RFC 3339)      ARGV[4]  dispute id
-- Returns {'resolved', status} or {'not_found'} or {'closed', status}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'not_found'} end
if status ~= 'open' then return {'closed', status} end
local e = redis.call('HMGET', KEYS[2], 'share', 'fee', 'price')
local share, fee, price = e[1], e[2], e[3]
local neg = function(v) if v == '0' then return '0' end return '-' .. v end
local after
redis.call('HINCRBY', KEYS[3], 'held', neg(share))
if ARGV[1] == 'refund' then
  redis.call('HINCRBY', KEYS[4], 'fees', neg(fee))
  redis.call('HINCRBY', KEYS[4], 'refunded', price)
  redis.call('HSET', KEYS[2], 'status', 'refunded')
  redis.call('SADD', KEYS[6], ARGV[4])
  after = 'refunded'
else
  redis.call('HINCRBY', KEYS[3], 'available', share)
  redis.call('HSET', KEYS[2], 'status', 'available')
  after = 'released'
end
redis.call('HSET', KEYS[1], 'status', after, 'resolved_at', ARGV[3], 'resolved_by', ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[4])
return {'resolved', after}
