-- Unbind an Idempotency-Key or payment identifier from a payment that was refused before it was
-- charged, so the key can be used again (claim_idempotency_key.lua binds it).
-- KEYS[1]  binding key (hash with `authorization_key`)
-- ARGV[1]  authorization key the binding must point to
-- Returns 1 when unbound, 0 when the key is bound to another payment or not bound.
if redis.call('HGET', KEYS[1], 'authorization_key') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
