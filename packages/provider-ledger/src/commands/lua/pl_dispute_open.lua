-- Open a dispute on a provider execution: only its payer, only while the share is held and
-- within the dispute window, at most once per execution. The share then stays held.
-- KEYS[1]  ledger entry hash
-- KEYS[2]  dispute hash (new)
-- KEYS[3]  provider disputes zset
-- KEYS[4]  open disputes zset
-- KEYS[5]  provider maturing zset
-- ARGV[1]  dispute id   ARGV[2]  caller address, lowercase   ARGV[3]  now, unix ms
-- ARGV[4]  reason       ARGV[5]  opened_at (RFC 3339)
-- Returns {'opened'}, {'not_found'} (no entry, or the caller is not its payer),
-- {'already_disputed', dispute id} or {'window_passed'}.
local e = redis.call('HMGET', KEYS[1], 'status', 'payer', 'dispute_id', 'matures_at', 'execution_id', 'provider_id',
  'provider_address', 'capability_id', 'price')
if not e[1] or string.lower(e[2]) ~= ARGV[2] then return {'not_found'} end
if e[3] then return {'already_disputed', e[3]} end
if e[1] ~= 'held' or tonumber(e[4]) <= tonumber(ARGV[3]) then return {'window_passed'} end
redis.call('HSET', KEYS[2],
  'dispute_id', ARGV[1], 'execution_id', e[5], 'provider_id', e[6], 'provider_address', e[7], 'capability_id', e[8],
  'payer', e[2], 'amount', e[9], 'status', 'open', 'reason', ARGV[4], 'opened_at', ARGV[5], 'opened_at_ms', ARGV[3])
redis.call('HSET', KEYS[1], 'dispute_id', ARGV[1])
redis.call('ZREM', KEYS[5], e[5])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return {'opened'}
