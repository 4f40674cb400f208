-- SET a key with a time to live, kept out of the AOF and the replicas.
-- KEYS[1]  key
-- ARGV[1]  value
-- ARGV[2]  time to live, milliseconds
-- Returns 1. For short-lived markers whose loss fails closed (a sign-in-with-x nonce issued with a
-- 402: lost, its proof is refused): under `appendfsync always` a logged write makes Redis fsync
-- before it answers anyone in the same event-loop iteration (docs/durability.md "What is not fsynced").
redis.set_repl(redis.REPL_NONE)
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return 1
