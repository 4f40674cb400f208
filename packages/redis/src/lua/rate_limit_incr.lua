-- rate-limiter-flexible's increment (its `customIncrTtlLuaScript` option, same contract as the
-- library's default script): counts ARGV[1] points under KEYS[1], a key that lives ARGV[2] seconds
-- from its first count, and returns {points consumed in the window, milliseconds until it expires}.
-- The one difference: neither written to the AOF nor sent to replicas (redis.set_repl). A rate
-- limit's counter needs no durability (a lost count only reopens a window), and under
-- `appendfsync always` a command that writes the AOF is answered only after an fsync, which every
-- request's rate limit then waited for (docs/durability.md "What is not fsynced").
redis.set_repl(redis.REPL_NONE)
redis.call('SET', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local consumed = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  ttl = 1000 * ARGV[2]
end
return {consumed, ttl}
