-- Holds groups as match proposals (acceptance), fenced like a claim: nothing
-- happens unless the caller's token is the mode's current lease; a group
-- with a ticket no longer live, or already in a proposal, holds nothing.
-- A held group's searches stay in the pool (a cancel or a status read work
-- as for any search); the snapshot and the expiry sweep leave them out.
--
-- KEYS: 1 lease, 2 players, 3 proposed, 4 answers, 5 proposals,
--       6 proposal deadlines
-- ARGV: 1 fencing token, 2 answers lifetime (seconds), then per group:
--       matchId, acceptBy, proposal JSON, n, n ticketIds, n playerIds
-- Returns {'lease_lost'}, or per group 'claimed', '' or 'conflict', k,
-- and the k tickets that could not be held.
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+)|') ~= ARGV[1] then
  return {'lease_lost'}
end
local reply = {}
local taken = {}
local at = 3
while at <= #ARGV do
  local match, by, meta, n = ARGV[at], ARGV[at + 1], ARGV[at + 2], tonumber(ARGV[at + 3])
  local first = at + 4
  local gone = {}
  for i = first, first + n - 1 do
    local ticket, player = ARGV[i], ARGV[i + n]
    if taken[ticket] or redis.call('HGET', KEYS[2], player) ~= ticket
      or redis.call('HEXISTS', KEYS[3], ticket) == 1 then
      gone[#gone + 1] = ticket
    end
  end
  if #gone == 0 then
    for i = first, first + n - 1 do
      local ticket = ARGV[i]
      taken[ticket] = true
      redis.call('HSET', KEYS[3], ticket, match)
      redis.call('HSET', KEYS[4], ticket, match .. '|pending')
    end
    redis.call('HSET', KEYS[5], match, meta)
    redis.call('ZADD', KEYS[6], by, match)
    reply[#reply + 1] = 'claimed'
    reply[#reply + 1] = ''
  else
    reply[#reply + 1] = 'conflict'
    reply[#reply + 1] = tostring(#gone)
    for i = 1, #gone do
      reply[#reply + 1] = gone[i]
    end
  end
  at = first + 2 * n
end
redis.call('EXPIRE', KEYS[4], ARGV[2])
return reply
