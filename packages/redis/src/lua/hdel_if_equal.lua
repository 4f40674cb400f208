-- Compare-and-delete of hash fields: deletes ARGV[3..] from the hash only while ARGV[1] still
-- holds ARGV[2] (e.g. forget a stored signed transaction only if it is still the one the caller
-- checked, never one another process stored meanwhile).
-- KEYS[1]  hash
-- ARGV[1]  field compared   ARGV[2]  expected value   ARGV[3..] fields to delete
-- Returns 1 when deleted, 0 when the field held something else (or nothing).
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], unpack(ARGV, 3))
return 1
