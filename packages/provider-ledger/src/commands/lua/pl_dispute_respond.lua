-- Record the provider's answer to an open dispute (only the provider's address; a later answer
-- replaces the statement while the dispute is open).
-- KEYS[1]  dispute hash
-- ARGV[1]  caller address, lowercase   ARGV[2]  statement   ARGV[3]  responded_at (RFC 3339)
-- Returns 'responded', 'not_found' (no dispute, or the caller is not its provider) or 'closed'.
local d = redis.call('HMGET', KEYS[1], 'status', 'provider_address')
if not d[1] or string.lower(d[2]) ~= ARGV[1] then return 'not_found' end
if d[1] ~= 'open' then return 'closed' end
redis.call('HSET', KEYS[1], 'statement', ARGV[2], 'responded_at', ARGV[3])
return 'responded'
