-- Claims a batch of groups (docs/architecture.md). Each group becomes one match on
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
-- ARGV: 1 fencing token, 2 bucket lifetime (seconds), 3 G (groups),
--       4 N (tickets of all groups); then per group: matchId,
--       ended JSON (matched), match record JSON, n; then the N ticketIds,
--       group after group (each once within its group); then their N
--       playerIds in the same order.
--
-- A ticket is live exactly when the players index maps its player to it
-- (add_search writes that entry, every way out of the pool removes it), so
-- one HMGET of short ticket ids checks the whole batch, and a ticket claimed
-- under another player than its own counts as gone.
--
-- The common batch (every ticket live, none listed twice) is claimed
-- straight from ARGV: its tickets and players are contiguous there, so no
-- Lua table is built per search but the ended records' pairs. Any other
-- batch takes the general path, group by group.
-- Returns {'lease_lost'}, or per group in order either 'claimed', outboxId
-- or 'conflict', k, and the k tickets that were no longer live (a ticket
-- listed by two groups of the batch goes to the first).
local OUTBOX, ENDED = KEYS[7], KEYS[8]
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+)|') ~= ARGV[1] then
  return {'lease_lost'}
end

local SLICE = 1000
local G, N = tonumber(ARGV[3]), tonumber(ARGV[4])
-- ARGV index of group g's header, of the first ticket and of the first player.
local function header(g) return 1 + 4 * g end
local T0 = header(G + 1)
local P0 = T0 + N

-- Runs `command key list[first..last]` in slices; returns the sum of the
-- replies (counts).
local function sliced(command, key, list, first, last)
  local total = 0
  for from = first, last, SLICE do
    total = total + redis.call(command, key, unpack(list, from, math.min(from + SLICE - 1, last)))
  end
  return total
end

-- Whether each of the N tickets is still live under the player listed with
-- it; with `all`, stops at the first that is not (returns nil) and keeps
-- nothing.
local function owners_match(all)
  local live = {}
  for from = 0, N - 1, SLICE do
    local to = math.min(from + SLICE, N) - 1
    local owners = redis.call('HMGET', KEYS[3], unpack(ARGV, P0 + from, P0 + to))
    for i = 0, to - from do
      local ok = owners[i + 1] == ARGV[T0 + from + i]
      if all then
        if not ok then
          return nil
        end
      else
        live[from + i + 1] = ok
      end
    end
  end
  return live
end

-- The fast path: every ticket live, the players' index entries removed.
local fast = owners_match(true) ~= nil
if fast and sliced('HDEL', KEYS[3], ARGV, P0, P0 + N - 1) < N then
  -- A ticket listed twice (its player counted once): put back exactly the
  -- entries removed (each mapped its player to its ticket) and take the
  -- general path.
  for from = 0, N - 1, SLICE do
    local entries = {}
    for i = from, math.min(from + SLICE, N) - 1 do
      entries[#entries + 1] = ARGV[P0 + i]
      entries[#entries + 1] = ARGV[T0 + i]
    end
    redis.call('HSET', KEYS[3], unpack(entries))
  end
  fast = false
end

-- claimed[g]: whether group g is claimed; gone[g]: the tickets it lacks.
local claimed, gone = {}, {}
local tickets, players = ARGV, ARGV
local first, last = T0, T0 + N - 1
if fast then
  for g = 1, G do
    claimed[g] = true
  end
else
  local live = owners_match(false)
  local taken = {}
  tickets, players = {}, {}
  local at = T0
  for g = 1, G do
    local n = tonumber(ARGV[header(g) + 3])
    local lacking = {}
    for i = at, at + n - 1 do
      if not live[i - T0 + 1] or taken[ARGV[i]] then
        lacking[#lacking + 1] = ARGV[i]
      end
    end
    if #lacking == 0 then
      claimed[g] = true
      for i = at, at + n - 1 do
        taken[ARGV[i]] = true
        tickets[#tickets + 1] = ARGV[i]
        players[#players + 1] = ARGV[i + N]
      end
    else
      gone[g] = lacking
    end
    at = at + n
  end
  first, last = 1, #tickets
  if last > 0 then
    sliced('HDEL', KEYS[3], players, first, last)
  end
end

local reply = {}
local ended, k = {}, 0
local at = T0
for g = 1, G do
  local h = header(g)
  local n = tonumber(ARGV[h + 3])
  if claimed[g] then
    local record = ARGV[h + 1]
    for i = at, at + n - 1 do
      ended[k + 1] = ARGV[i]
      ended[k + 2] = record
      k = k + 2
      if k >= 2 * SLICE then
        redis.call('HSET', ENDED, unpack(ended, 1, k))
        k = 0
      end
    end
    reply[#reply + 1] = 'claimed'
    reply[#reply + 1] = redis.call('XADD', OUTBOX, '*', 'matchId', ARGV[h], 'record', ARGV[h + 2])
  else
    reply[#reply + 1] = 'conflict'
    reply[#reply + 1] = tostring(#gone[g])
    for i = 1, #gone[g] do
      reply[#reply + 1] = gone[g][i]
    end
  end
  at = at + n
end
if k > 0 then
  redis.call('HSET', ENDED, unpack(ended, 1, k))
end

if last >= first then
  sliced('HDEL', KEYS[2], tickets, first, last)
  -- The deadline index keeps their entries: the expiry sweep drops them
  -- (a ZREM per search would cost more than all the rest of a claim).
  -- Pings and reasons are only written for live searches: a hash that does
  -- not exist has nothing of them.
  if redis.call('EXISTS', KEYS[5]) == 1 then
    sliced('HDEL', KEYS[5], tickets, first, last)
  end
  if redis.call('EXISTS', KEYS[6]) == 1 then
    sliced('HDEL', KEYS[6], tickets, first, last)
  end
  redis.call('EXPIRE', ENDED, ARGV[2])
end
return reply
