-- Release a lease taken with wm_lease, only by its holder (a lease another holder took after
-- this one expired is left alone).
-- KEYS[1]  lease key
-- ARGV[1]  holder token
-- Returns 1 when released, 0 when the caller did not hold it.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
