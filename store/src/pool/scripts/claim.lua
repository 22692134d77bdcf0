-- Claims a group into one match: all of its searches or none, and only under
-- the mode's current lease fencing token; the match record goes to the
-- mode's outbox in the same step (SPEC 5.7, 5.8).
-- KEYS: 1 lease, 2 pool, 3 players, 4 deadlines, 5 pings, 6 reasons,
--       7 project live, 8 outbox, 9 project modes,
--       10.. ended:<ticket> for each ARGV[7..]
-- ARGV: 1 fencing token, 2 ended JSON (matched), 3 retention seconds,
--       4 match record JSON, 5 matchId, 6 mode name, 7.. ticketIds (each once)
-- Returns {'claimed', outboxId} | {'conflict', gone...} | {'lease_lost'}
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+)|') ~= ARGV[1] then
  return {'lease_lost'}
end
local searches = {}
local gone = {'conflict'}
for i = 7, #ARGV do
  local search = redis.call('HGET', KEYS[2], ARGV[i])
  if search then
    searches[i] = search
  else
    gone[#gone + 1] = ARGV[i]
  end
end
if #gone > 1 then
  return gone
end
for i = 7, #ARGV do
  remove_live(KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[i], searches[i])
  redis.call('SET', KEYS[3 + i], ARGV[2], 'EX', ARGV[3])
end
decrease_live(KEYS[7], #ARGV - 6)
forget_if_empty(KEYS[2], KEYS[9], ARGV[6])
local id = redis.call('XADD', KEYS[8], '*', 'matchId', ARGV[5], 'record', ARGV[4])
return {'claimed', id}
