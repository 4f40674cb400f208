-- Bind an Idempotency-Key to one request and the operation it started.
-- KEYS[1]  idempotency key (hash)
-- ARGV[1]  request hash
-- ARGV[2]  authorization key the request is paid with
-- ARGV[3]  ttl, seconds
-- Returns {"claimed"} or {"exists", request_hash, authorization_key}.
if redis.call('EXISTS', KEYS[1]) == 1 then
  local v = redis.call('HMGET', KEYS[1], 'request_hash', 'authorization_key')
  return {'exists', v[1] or '', v[2] or ''}
end
redis.call('HSET', KEYS[1], 'request_hash', ARGV[1], 'authorization_key', ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return {'claimed'}
