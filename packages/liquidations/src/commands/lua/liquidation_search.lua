--[[
liquidation_search: the top liquidation opportunities of one chain's index, read atomically
(one consistent block), sorted by estimated profit descending.

KEYS[1]  meta hash (block_number, ...)
KEYS[2]  pos hash: position key -> opportunity JSON
KEYS[3]  hf hash: position key -> health factor (decimal string)
KEYS[4..7] sorted sets opp:aave_v3, opp:spark, opp:compound_v3, opp:morpho_blue
           (score = estimated_profit_usd, member = position key; only positions with debt
           and health factor <= 1.1 are in them)
ARGV[1]  min_profit_usd (decimal string; inclusive)
ARGV[2]  max_health_factor (decimal string; inclusive)
ARGV[3]  limit (integer >= 1)
ARGV[4]  four '0'/'1' flags, one per sorted set: include that protocol

Returns { block_number or '', version or '', json1, json2, ... } (at most `limit` documents);
`version` is the meta hash's write counter (one per written block), so a caller can reuse the
answer until the next write.
Each sorted set is walked from the highest profit down, in pages of max(64, 2 x limit) (at most
512), skipping members above
max_health_factor, until `limit` members passed or the set is exhausted; the per-protocol lists
are then merged (profit desc, key asc on ties).
]]
local meta = redis.call('HMGET', KEYS[1], 'block_number', 'version')
local block = meta[1]
if not block then return { '', '' } end
local version = meta[2] or ''
local minProfit = ARGV[1]
local maxHf = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local flags = ARGV[4]
-- most queried members pass (the sets hold health factors <= 1.1 only): a page a little larger than
-- `limit` usually ends the walk in one read
local PAGE = math.min(512, math.max(64, 2 * limit))

local picked = {}
for i = 1, 4 do
  if string.sub(flags, i, i) == '1' then
    local zkey = KEYS[3 + i]
    local offset = 0
    local found = 0
    while found < limit do
      local page = redis.call('ZREVRANGEBYSCORE', zkey, '+inf', minProfit, 'WITHSCORES', 'LIMIT', offset, PAGE)
      local n = #page / 2
      if n == 0 then break end
      local members = {}
      for j = 1, n do members[j] = page[2 * j - 1] end
      local hfs = redis.call('HMGET', KEYS[3], unpack(members))
      for j = 1, n do
        local hf = tonumber(hfs[j])
        if found < limit and hf ~= nil and hf <= maxHf then
          picked[#picked + 1] = { tonumber(page[2 * j]), members[j] }
          found = found + 1
        end
      end
      if n < PAGE then break end
      offset = offset + PAGE
    end
  end
end

table.sort(picked, function(a, b)
  if a[1] == b[1] then return a[2] < b[2] end
  return a[1] > b[1]
end)

local out = { block, version }
local n = math.min(limit, #picked)
if n == 0 then return out end
local keys = {}
for i = 1, n do keys[i] = picked[i][2] end
local docs = redis.call('HMGET', KEYS[2], unpack(keys))
for i = 1, n do
  if docs[i] then out[#out + 1] = docs[i] end
end
return out
