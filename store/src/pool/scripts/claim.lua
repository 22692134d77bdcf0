-- Claims a group into one match: all of its searches or none, and only under
-- the mode's current lease fencing token; the match record goes to the
-- mode's outbox in the same step (SPEC 5.7, 5.8). Variadic commands (one
-- HMGET, one HDEL per index) keep the cost per search low: a cycle claims
-- tens of thousands of searches.
-- KEYS: 1 lease, 2 pool, 3 players, 4 deadlines, 5 pings, 6 reasons,
--       7 project live, 8 outbox, 9 project modes, 10 ended (current bucket)
-- ARGV: 1 fencing token, 2 ended JSON (matched), 3 bucket lifetime (seconds),
--       4 match record JSON, 5 matchId, 6 mode name, 7.. ticketIds (each once)
-- Returns {'claimed', outboxId} | {'conflict', gone...} | {'lease_lost'}
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+)|') ~= ARGV[1] then
  return {'lease_lost'}
end
local n = #ARGV - 6
local tickets = {}
for i = 1, n do
  tickets[i] = ARGV[6 + i]
end
local searches = redis.call('HMGET', KEYS[2], unpack(tickets))
local gone = {'conflict'}
for i = 1, n do
  if not searches[i] then
    gone[#gone + 1] = tickets[i]
  end
end
if #gone > 1 then
  return gone
end
local players = {}
for i = 1, n do
  players[i] = cjson.decode(searches[i])['playerId']
end
local owners = redis.call('HMGET', KEYS[3], unpack(players))
local released = {}
for i = 1, n do
  if owners[i] == tickets[i] then
    released[#released + 1] = players[i]
  end
end
if #released > 0 then
  redis.call('HDEL', KEYS[3], unpack(released))
end
redis.call('HDEL', KEYS[2], unpack(tickets))
redis.call('ZREM', KEYS[4], unpack(tickets))
redis.call('HDEL', KEYS[5], unpack(tickets))
redis.call('HDEL', KEYS[6], unpack(tickets))
record_ended(KEYS[10], ARGV[3], ARGV[2], tickets)
decrease_live(KEYS[7], n)
forget_if_empty(KEYS[2], KEYS[9], ARGV[6])
local id = redis.call('XADD', KEYS[8], '*', 'matchId', ARGV[5], 'record', ARGV[4])
return {'claimed', id}
