-- Token bucket on the Redis clock (docs/spec-notes.md 8: 10 requests/s per IP, burst 20; docs/pitfalls.md:
-- a true token bucket, not a fixed window). Atomic and shared by every replica.
-- KEYS[1]  bucket (hash: tokens, ts = Redis TIME of the last update in microseconds)
-- ARGV[1]  refill rate, tokens per second (> 0)
-- ARGV[2]  capacity (burst), tokens
-- ARGV[3]  cost of this request, tokens
-- ARGV[4]  optional: when the client sent this request, unix ms on its clock
-- ARGV[5]  optional: age past which the request is stale, ms. A stale request is one Redis executes
--          only now because it was frozen when it arrived (SIGSTOP, a stalled VM): the client has
--          long answered it (503), so it is allowed without taking tokens and the bucket is left as
--          it is; a backlog released at once then drains no bucket (no burst of 429s after an outage).
-- A new bucket starts full. Refill is continuous: tokens += elapsed_us * rate / 1e6, capped at capacity.
-- Returns {allowed (1|0), tokens left (string), retry_after_us (0 when allowed), now_us (string)}.
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
if ARGV[4] and ARGV[5] and now / 1000 - tonumber(ARGV[4]) > tonumber(ARGV[5]) then
  return {1, '0', 0, string.format('%d', now)}
end
local v = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(v[1])
local ts = tonumber(v[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
if now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate / 1000000)
end
local allowed = 0
local retry_us = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  retry_us = math.ceil((cost - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'ts', string.format('%d', now))
-- an idle bucket is full again after burst/rate seconds: it can expire then
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, string.format('%.6f', tokens), retry_us, string.format('%d', now)}
