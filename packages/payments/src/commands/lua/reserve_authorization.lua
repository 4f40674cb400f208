-- Reserve an x402 payment authorization (EIP-3009 from + nonce) before it is settled, so that one
-- payment can never run a paid operation twice (docs/decisions.md "x402 payments").
-- KEYS[1]  authorization key (hash)
-- KEYS[2]  in-flight set (sorted set: authorization key -> last progress, unix ms), swept for crashes
-- ARGV[1]  request hash (sha256 of method, path and canonical body)
-- ARGV[2]  payload hash (sha256 of the PaymentPayload's signed part)
-- ARGV[3]  operation id (e.g. execution id exe_...)
-- ARGV[4]  now, unix milliseconds
-- ARGV[5]  ttl, seconds
-- ARGV[6..9] asset, payer (from), EIP-3009 nonce, amount (integer base units): what a recovery needs
-- ARGV[10] x402 scheme (`exact`, `upto`): which recovery applies
-- Returns {"reserved"} when this call took the reservation, else
-- {"exists", state, request_hash, payload_hash, operation_id, updated_at}.
if redis.call('EXISTS', KEYS[1]) == 1 then
  local v = redis.call('HMGET', KEYS[1], 'state', 'request_hash', 'payload_hash', 'operation_id', 'updated_at')
  return {'exists', v[1] or '', v[2] or '', v[3] or '', v[4] or '', v[5] or '0'}
end
redis.call('HSET', KEYS[1],
  'state', 'pending',
  'request_hash', ARGV[1],
  'payload_hash', ARGV[2],
  'operation_id', ARGV[3],
  'created_at', ARGV[4],
  'updated_at', ARGV[4],
  'asset', ARGV[6] or '',
  'payer', ARGV[7] or '',
  'nonce', ARGV[8] or '',
  'amount', ARGV[9] or '',
  'scheme', ARGV[10] or 'exact')
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
redis.call('ZADD', KEYS[2], tonumber(ARGV[4]), KEYS[1])
return {'reserved'}
