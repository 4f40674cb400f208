-- Queue one accepted bundle in the builder's orderflow pool, record its receipt, count it and price
-- it, in one atomic step (one round trip, which the builder's auto-pipelined connection batches with
-- other requests' commands).
-- numkeys is given by the caller (7 + 2 keys per target block).
-- KEYS[1]  builder stats hash (`bids_received`)
-- KEYS[2]  searcher hash (`bundles`, `last_bundle_at`, `paid_base_units` | `debited_base_units` | `owed_base_units`)
-- KEYS[3]  the searcher's metered account hash (field `balance`; same layout as debit_account.lua)
-- KEYS[4]  that account's usage list (newest first, capped)
-- KEYS[5]  replacement-uuid key of the searcher (written only when ARGV[10] is not empty)
-- KEYS[6]  the searcher's priced-bundle marker (`<block>:uuid:<uuid>` or `<block>:<bundle_hash>`): a
--          bundle already priced for this searcher is stored again but neither counted nor priced again
-- KEYS[7]  the searcher's replacement-nonce key of the uuid (`<nonce>|<bundle_hash>` of the last accepted bundle)
-- KEYS[8], KEYS[9], ...  per target block: pool hash, bundle-stats hash
-- ARGV[1]  pool field (`<searcher>:<bundle_hash>`)
-- ARGV[2]  stats field of the receipt (`recv:<searcher>`), ARGV[3] received at (UNIX ms), ARGV[4] received at (RFC 3339)
-- ARGV[5]  required tx hashes (comma-separated), ARGV[6] pool TTL seconds, ARGV[7] stats TTL seconds
-- ARGV[8]  price (integer base units), ARGV[9] how it is paid: `x402` (already paid) or `rpc` (account, else owed)
-- ARGV[10] replacement-uuid value (`<first block>|<field>`), or '' when the bundle has no uuid
-- ARGV[11] usage line (JSON) written when the account pays, ARGV[12] max usage lines kept
-- ARGV[13] replacementNonce ('' when none), ARGV[14] bundle hash
-- ARGV[15], ARGV[16], ...  the stored bundle (JSON) per target block, in KEYS order
-- Returns {charged, balance, previous, resent, received} (received: this searcher's first receipt, UNIX ms, of the first block's stats): charged 2 paid (x402), 1 debited from the account, 0 owed
-- (for a resend: how the first was priced); balance of the account after ('' for x402 and resends);
-- previous: the uuid key's former value, or '' when none; resent 1 when the marker was already set.
-- Refused (nothing written): {-1, last nonce} when ARGV[13] is not above the last accepted nonce of the uuid
-- (equal is accepted only for the same bundle hash: a resend); {-2, last nonce} when the uuid is ordered by
-- nonce and this bundle has none.
if ARGV[10] ~= '' then
  local cur = redis.call('GET', KEYS[7])
  if cur then
    local sep = string.find(cur, '|', 1, true)
    local last = tonumber(string.sub(cur, 1, sep - 1))
    if ARGV[13] == '' then return {-2, tostring(last), '', 0} end
    local mine = tonumber(ARGV[13])
    if mine < last or (mine == last and string.sub(cur, sep + 1) ~= ARGV[14]) then
      return {-1, string.sub(cur, 1, sep - 1), '', 0}
    end
  end
  if ARGV[13] ~= '' then redis.call('SET', KEYS[7], ARGV[13] .. '|' .. ARGV[14], 'EX', tonumber(ARGV[6])) end
end
local blocks = (#KEYS - 7) / 2
for i = 1, blocks do
  local pool = KEYS[6 + 2 * i]
  local stats = KEYS[7 + 2 * i]
  redis.call('HSET', pool, ARGV[1], ARGV[14 + i])
  redis.call('EXPIRE', pool, tonumber(ARGV[6]))
  redis.call('HSETNX', stats, ARGV[2], ARGV[3])
  redis.call('HSET', stats, 'txs', ARGV[5])
  redis.call('EXPIRE', stats, tonumber(ARGV[7]))
end
-- this searcher's first receipt of the bundle for its first block (a resend keeps the first one's time)
local received = redis.call('HGET', KEYS[9], ARGV[2])
-- a resend of a bundle already priced (same searcher, same transactions and block, or same uuid and
-- block) is answered as the first one was: not counted, not priced again (x402 bundles are paid per call)
local prior = false
if ARGV[9] ~= 'x402' then prior = redis.call('GET', KEYS[6]) end
if prior then
  local previous = ''
  if ARGV[10] ~= '' then
    previous = redis.call('SET', KEYS[5], ARGV[10], 'EX', tonumber(ARGV[6]), 'GET') or ''
  end
  return {tonumber(prior), '', previous, 1, received}
end

redis.call('HINCRBY', KEYS[1], 'bids_received', 1)
redis.call('HINCRBY', KEYS[2], 'bundles', 1)
redis.call('HSET', KEYS[2], 'last_bundle_at', ARGV[4])

local amount = tonumber(ARGV[8])
local charged = 0
local balance = ''
if ARGV[9] == 'x402' then
  redis.call('HINCRBY', KEYS[2], 'paid_base_units', amount)
  charged = 2
else
  local b = tonumber(redis.call('HGET', KEYS[3], 'balance') or '0')
  if amount > 0 and b >= amount then
    balance = tostring(redis.call('HINCRBY', KEYS[3], 'balance', -amount))
    redis.call('HINCRBY', KEYS[3], 'spent', amount)
    redis.call('LPUSH', KEYS[4], ARGV[11])
    redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[12]) - 1)
    redis.call('HINCRBY', KEYS[2], 'debited_base_units', amount)
    charged = 1
  else
    redis.call('HINCRBY', KEYS[2], 'owed_base_units', amount)
    balance = tostring(b)
  end
end

if ARGV[9] ~= 'x402' then redis.call('SET', KEYS[6], charged, 'EX', tonumber(ARGV[6])) end

local previous = ''
if ARGV[10] ~= '' then
  previous = redis.call('SET', KEYS[5], ARGV[10], 'EX', tonumber(ARGV[6]), 'GET') or ''
end
return {charged, balance, previous, 0, received}
