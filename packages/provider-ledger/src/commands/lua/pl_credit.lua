-- Credit a provider's share of a SUCCEEDED provider execution, once per execution
-- (docs/decisions.md "Providers": the share is held through the dispute window). Amounts are integer
-- strings (USDC base units) and only ever go through HINCRBY (64-bit), never Lua numbers.
-- KEYS[1]  ledger entry hash of the execution
-- KEYS[2]  provider balance hash
-- KEYS[3]  provider maturing zset
-- KEYS[4]  ledger totals hash
-- KEYS[5]  providers set
-- ARGV[1]  execution id         ARGV[2]  provider id       ARGV[3]  provider address
-- ARGV[4]  capability id        ARGV[5]  payer             ARGV[6]  price
-- ARGV[7]  share                ARGV[8]  fee               ARGV[9]  payment tx hash
-- ARGV[10] credited_at, unix ms ARGV[11] matures_at, unix ms
-- Returns {1, share, fee} when credited now, {0, share, fee} (the first credit's) when already credited.
if redis.call('EXISTS', KEYS[1]) == 1 then
  local e = redis.call('HMGET', KEYS[1], 'share', 'fee')
  return {0, e[1], e[2]}
end
redis.call('HSET', KEYS[1],
  'execution_id', ARGV[1], 'provider_id', ARGV[2], 'provider_address', ARGV[3], 'capability_id', ARGV[4],
  'payer', ARGV[5], 'price', ARGV[6], 'share', ARGV[7], 'fee', ARGV[8], 'payment_tx_hash', ARGV[9],
  'credited_at', ARGV[10], 'matures_at', ARGV[11], 'status', 'held')
redis.call('HINCRBY', KEYS[2], 'held', ARGV[7])
redis.call('HSET', KEYS[2], 'address', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[11], ARGV[1])
redis.call('HINCRBY', KEYS[4], 'credited', ARGV[6])
redis.call('HINCRBY', KEYS[4], 'fees', ARGV[8])
redis.call('HINCRBY', KEYS[4], 'entries', 1)
redis.call('SADD', KEYS[5], ARGV[2])
return {1, ARGV[7], ARGV[8]}
