-- Claims one backfill fill (docs/backfill.md): nothing at all happens unless the
-- caller's fencing token is the mode's lease; nothing is claimed unless the
-- backfill is open at the revision the fill was computed from, not expired
-- and has the seats, and every search is live. Then, in this one step, the
-- searches leave the pool as matched into the running match, the seats are
-- taken (status 'filled' once none is left), the revision grows and the
-- fill's record goes to the outbox.
--
-- KEYS: 1 lease, 2 pool, 3 players, 4 deadlines, 5 pings, 6 reasons,
--       7 outbox, 8 ended (current bucket), 9 backfill_seats, 10 backfills
-- ARGV: 1 fencing token, 2 bucket lifetime (seconds), 3 backfillId,
--       4 revision, 5 now (Unix seconds), 6 seats taken per team
--       (comma-separated), 7 matchId, 8 ended JSON (matched), 9 fill
--       record JSON, 10 n, then n ticketIds and their n playerIds, then
--       the backfill's view after the fill (its roster grown by the
--       seated players) or '' to keep the view
-- Returns {'lease_lost'}, {'stale'}, {'conflict', k, k gone tickets} or
-- {'claimed', outboxId, newStatus}.
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+)|') ~= ARGV[1] then
  return {'lease_lost'}
end

local cur = redis.call('HGET', KEYS[9], ARGV[3])
if not cur then
  return {'stale'}
end
local status, revision, expires, seats = string.match(cur, '^(%a+)|(%d+)|([^|]*)|(.*)$')
if status ~= 'open' or revision ~= ARGV[4] or tonumber(ARGV[5]) >= tonumber(expires) then
  return {'stale'}
end
local open, taken = {}, {}
for s in string.gmatch(seats, '%d+') do
  open[#open + 1] = tonumber(s)
end
for s in string.gmatch(ARGV[6], '%d+') do
  taken[#taken + 1] = tonumber(s)
end
if #open ~= #taken then
  return {'stale'}
end
local left, any_left = {}, false
for i = 1, #open do
  if open[i] < taken[i] then
    return {'stale'}
  end
  left[i] = string.format('%d', open[i] - taken[i])
  if open[i] > taken[i] then
    any_left = true
  end
end

local n = tonumber(ARGV[10])
local gone = {}
for i = 11, 10 + n do
  if redis.call('HGET', KEYS[3], ARGV[i + n]) ~= ARGV[i] then
    gone[#gone + 1] = ARGV[i]
  end
end
if #gone > 0 then
  local reply = {'conflict', tostring(#gone)}
  for i = 1, #gone do
    reply[#reply + 1] = gone[i]
  end
  return reply
end

for i = 11, 10 + n do
  local ticket, player = ARGV[i], ARGV[i + n]
  redis.call('HDEL', KEYS[3], player)
  redis.call('HDEL', KEYS[2], ticket)
  redis.call('HDEL', KEYS[5], ticket)
  redis.call('HDEL', KEYS[6], ticket)
  redis.call('HSET', KEYS[8], ticket, ARGV[8])
end
redis.call('EXPIRE', KEYS[8], ARGV[2])

local new_status = any_left and 'open' or 'filled'
redis.call('HSET', KEYS[9], ARGV[3], new_status .. '|' .. tostring(tonumber(revision) + 1) .. '|'
           .. expires .. '|' .. table.concat(left, ','))
local view = ARGV[11 + 2 * n]
if view and view ~= '' then
  redis.call('HSET', KEYS[10], ARGV[3], view)
end
local id = redis.call('XADD', KEYS[7], '*', 'matchId', ARGV[7], 'record', ARGV[9])
return {'claimed', id, new_status}
