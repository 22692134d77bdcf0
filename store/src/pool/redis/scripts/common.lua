-- Shared by the scripts that take a search out of the pool (prepended to
-- each of them by the Rust side, so every script stays one EVALSHA).
--
-- remove_live(pool, players, deadlines, pings, reasons, ticket, search_json)
-- deletes every trace of a live search; the caller writes its `ended` record
-- (the project's live counter follows from a measurement, see measure).
local function remove_live(pool, players, deadlines, pings, reasons, ticket, search_json)
  local player = cjson.decode(search_json)['playerId']
  if player and redis.call('HGET', players, player) == ticket then
    redis.call('HDEL', players, player)
  end
  redis.call('HDEL', pool, ticket)
  redis.call('ZREM', deadlines, ticket)
  redis.call('HDEL', pings, ticket)
  redis.call('HDEL', reasons, ticket)
end

-- The pool's size now and a new version of that measurement: the project's
-- counter keeps the measurement of the highest version
-- (scripts/live_apply.lua). A version is the node's clock in microseconds,
-- and always above the mode's last one (kept in `version`), so versions
-- keep growing when Redis lost the mode's keys or the slot moved to a node
-- whose clock is behind.
local function measure(pool, version)
  local time = redis.call('TIME')
  local v = tonumber(time[1]) * 1000000 + tonumber(time[2])
  local last = tonumber(redis.call('GET', version) or '0')
  if v <= last then
    v = last + 1
  end
  local text = string.format('%.0f', v)
  redis.call('SET', version, text)
  return {redis.call('HLEN', pool), text}
end

-- The ended record of a ticket, newest bucket first (see redis_keys.rs:
-- three buckets, current, next and previous, are passed to every script).
local function find_ended(current, next, previous, ticket)
  return redis.call('HGET', next, ticket)
    or redis.call('HGET', current, ticket)
    or redis.call('HGET', previous, ticket)
end

-- An ended record (JSON object text from the Rust side) with the search's
-- `queuedAt` (from its pool entry) added before the closing brace.
local function with_queued_at(json, search_json)
  local search = cjson.decode(search_json)
  local queued = search['queuedAt']
  if type(queued) ~= 'number' then
    return json
  end
  local socket = ''
  if search['socket'] == true then
    socket = ',"socket":true'
  end
  return string.sub(json, 1, -2) .. ',"queuedAt":' .. string.format('%.17g', queued) .. socket .. '}'
end

-- Writes one ended record per ticket (pairs: ticket, json, ticket, json, …)
-- into the current bucket.
local function record_ended_each(current, keep, pairs)
  redis.call('HSET', current, unpack(pairs))
  redis.call('EXPIRE', current, keep)
end

-- Whether an `ended` record says the search was matched.
local function is_matched(ended)
  return ended and string.find(ended, '"status":"matched"', 1, true) ~= nil
end


-- Adds a live search, enforcing one live search per ticket and per player
-- in the mode and the spent ticket rule, in one atomic step (the add
-- script). The project's rules were checked before, in the project's slot
-- (scripts/live_begin.lua), and come in as `refusal`, applied after this
-- mode's own: '' (none), 'quota', or 'player' with the live ticket and its
-- mode in `held_ticket`, `held_mode`.
-- keys: pool, players, deadlines, the three ended buckets (current, next,
--       previous), the mode's live version
-- ticket, player: ids; entry: the pool entry (JSON); deadline: Unix
-- seconds.
-- Returns {'ok', pool size, version} (see measure) | {'active'} |
-- {'matched'} | {'player', ticketId, mode} | {'quota'}
local function add_live(pool, players, deadlines, current, next, previous, version,
                        ticket, player, entry, deadline, mode, refusal, held_ticket, held_mode)
  if redis.call('HEXISTS', pool, ticket) == 1 then
    return {'active'}
  end
  local ended = find_ended(current, next, previous, ticket)
  if is_matched(ended) then
    return {'matched'}
  end
  local other = redis.call('HGET', players, player)
  if other then
    return {'player', other, mode}
  end
  if refusal == 'player' then
    return {'player', held_ticket, held_mode}
  elseif refusal == 'quota' then
    return {'quota'}
  end
  -- A released match's ticket resumes its first search's wait (a key
  -- can only match as a key: quotes inside strings are escaped).
  if ended and string.find(ended, '"status":"released"', 1, true) then
    local first = string.match(ended, '"queuedAt":([^,}]+)')
    if first then
      entry = string.gsub(entry, '"queuedAt":[^,}]+', '"queuedAt":' .. first, 1)
    end
  end
  redis.call('HSET', pool, ticket, entry)
  redis.call('HSET', players, player, ticket)
  redis.call('ZADD', deadlines, deadline, ticket)
  if ended then
    redis.call('HDEL', current, ticket)
    redis.call('HDEL', next, ticket)
    redis.call('HDEL', previous, ticket)
  end
  local size = measure(pool, version)
  return {'ok', size[1], size[2]}
end
