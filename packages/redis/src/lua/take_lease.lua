-- Take or extend a lease (one holder at a time, e.g. one chain watcher per chain across replicas).
-- KEYS[1]  lease key
-- ARGV[1]  holder token
-- ARGV[2]  lease time, milliseconds
-- Returns 1 when the caller holds the lease (taken now or extended), 0 when another holder has it.
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  return 1
end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
  return 1
end
return 0
