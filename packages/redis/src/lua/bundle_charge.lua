-- Charge one accepted bundle to its searcher: from the searcher's metered account when it holds the
-- price, else recorded as owed (settled out-of-band). Atomic with respect to the account's debits.
-- KEYS[1]  account hash (field `balance`, integer USDC base units; same layout as debit_account.lua)
-- KEYS[2]  account usage list (newest first, capped)
-- KEYS[3]  searcher hash (fields `debited_base_units`, `owed_base_units`)
-- ARGV[1]  price, integer base units (> 0)
-- ARGV[2]  usage line (JSON) written when the account pays
-- ARGV[3]  max usage lines kept
-- Returns {status, balance}: status 1 debited from the account, 0 recorded as owed.
local amount = tonumber(ARGV[1])
local balance = tonumber(redis.call('HGET', KEYS[1], 'balance') or '0')
if amount > 0 and balance >= amount then
  local after = redis.call('HINCRBY', KEYS[1], 'balance', -amount)
  redis.call('HINCRBY', KEYS[1], 'spent', amount)
  redis.call('LPUSH', KEYS[2], ARGV[2])
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
  redis.call('HINCRBY', KEYS[3], 'debited_base_units', amount)
  return {1, tostring(after)}
end
redis.call('HINCRBY', KEYS[3], 'owed_base_units', amount)
return {0, tostring(balance)}
