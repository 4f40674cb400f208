-- Record a refund as pending, once per operation, with all its fields in one write (a crash or a
-- lost write can never leave a refund record with a status and no amount).
-- KEYS[1]  refund key (hash)
-- ARGV[1]  amount (integer string, USDC base units)
-- ARGV[2]  payer address
-- ARGV[3]  payment tx hash
-- Returns 1 when the record was created, 0 when one exists (left unchanged).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'status', 'pending', 'amount', ARGV[1], 'payer', ARGV[2], 'payment_tx_hash', ARGV[3])
return 1
