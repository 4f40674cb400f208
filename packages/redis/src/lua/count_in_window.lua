-- Count one event in a fixed window (a rate limit's counter) and say how long the window lasts.
-- KEYS[1]  the window's counter key (named by the caller's clock, e.g. `<ip>:<unix second>`)
-- ARGV[1]  window length, milliseconds (the key's time to live, set by the first count)
-- Returns {count in the window including this one, milliseconds until the window's key expires}.
-- Neither written to the AOF nor sent to replicas (redis.set_repl): a counter of a window this
-- short needs no durability, and under `appendfsync always` a command that writes the AOF is
-- answered only after an fsync, which a request's rate limit then waited for.
redis.set_repl(redis.REPL_NONE)
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
end
return {count, redis.call('PTTL', KEYS[1])}
