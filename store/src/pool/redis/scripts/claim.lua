-- Claims a batch of groups (SPEC 5.7, 5.8). Each group becomes one match on
-- its own: all of its searches or none. Nothing at all happens unless the
-- caller's fencing token is the mode's current lease. A claimed group's
-- match record goes to the mode's outbox in this same step.
--
-- One script run claims many groups, and every Redis command below takes
-- the whole batch at once (in slices of SLICE arguments: Lua's unpack
-- limit), so a cycle that claims 100 000 searches costs Redis a few dozen
-- commands per batch, not several per search.
--
-- KEYS: 1 lease, 2 pool, 3 players, 4 deadlines, 5 pings, 6 reasons,
--       7 outbox, 8 ended (current bucket)
-- ARGV: 1 fencing token, 2 bucket lifetime (seconds), 3 mode name, then per
--       group: matchId, ended JSON (matched), match record JSON, n, n
--       ticketIds (each once within the group), and their n playerIds
--
-- A ticket is live exactly when the players index maps its player to it
-- (add_search writes that entry, every way out of the pool removes it), so
-- one HMGET of short ticket ids checks the whole batch, and a ticket claimed
-- under another player than its own counts as gone.
-- Returns {'lease_lost'}, or per group in order either 'claimed', outboxId
-- or 'conflict', k, and the k tickets that were no longer live (a ticket
-- listed by two groups of the batch goes to the first).
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+)|') ~= ARGV[1] then
  return {'lease_lost'}
end

local SLICE = 1000

-- Runs `command key args[1..]` in slices; returns the replies concatenated.
local function sliced(command, key, args, step)
  step = step or SLICE
  local replies = {}
  for first = 1, #args, step do
    local last = math.min(first + step - 1, #args)
    local reply = redis.call(command, key, unpack(args, first, last))
    if type(reply) == 'table' then
      for i = 1, #reply do
        replies[#replies + 1] = reply[i]
      end
    end
  end
  return replies
end

-- The groups, and every ticket and player of the batch.
local groups = {}
local all_tickets, all_players = {}, {}
local at = 4
while at <= #ARGV do
  local n = tonumber(ARGV[at + 3])
  groups[#groups + 1] = {match = ARGV[at], ended = ARGV[at + 1], record = ARGV[at + 2],
                         first = at + 4, n = n}
  for i = at + 4, at + 3 + n do
    all_tickets[#all_tickets + 1] = ARGV[i]
    all_players[#all_players + 1] = ARGV[i + n]
  end
  at = at + 4 + 2 * n
end

-- The live ones among them, with their players.
local owners = sliced('HMGET', KEYS[3], all_players)
local player_of = {}
for i = 1, #all_tickets do
  if owners[i] == all_tickets[i] then
    player_of[all_tickets[i]] = all_players[i]
  end
end

local reply = {}
local tickets, players, ended = {}, {}, {}
for _, group in ipairs(groups) do
  local gone = {}
  for i = group.first, group.first + group.n - 1 do
    if not player_of[ARGV[i]] then
      gone[#gone + 1] = ARGV[i]
    end
  end
  if #gone == 0 then
    for i = group.first, group.first + group.n - 1 do
      local ticket = ARGV[i]
      tickets[#tickets + 1] = ticket
      players[#players + 1] = player_of[ticket]
      ended[#ended + 1] = ticket
      ended[#ended + 1] = group.ended
      player_of[ticket] = nil
    end
    reply[#reply + 1] = 'claimed'
    reply[#reply + 1] = redis.call('XADD', KEYS[7], '*', 'matchId', group.match,
                                   'record', group.record)
  else
    reply[#reply + 1] = 'conflict'
    reply[#reply + 1] = tostring(#gone)
    for i = 1, #gone do
      reply[#reply + 1] = gone[i]
    end
  end
end

if #tickets > 0 then
  sliced('HDEL', KEYS[3], players)
  sliced('HDEL', KEYS[2], tickets)
  -- The deadline index keeps their entries: the expiry sweep drops them
  -- (a ZREM per search would cost more than all the rest of a claim).
  sliced('HDEL', KEYS[5], tickets)
  sliced('HDEL', KEYS[6], tickets)
  sliced('HSET', KEYS[8], ended, 2 * SLICE)
  redis.call('EXPIRE', KEYS[8], ARGV[2])
end
return reply
