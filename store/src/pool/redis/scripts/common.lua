-- Shared by the scripts that take a search out of the pool (prepended to
-- each of them by the Rust side, so every script stays one EVALSHA).
--
-- remove_live(pool, players, deadlines, pings, reasons, ticket, search_json)
-- deletes every trace of a live search; the caller writes its `ended` record
-- and adjusts the project's live counter.
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

-- Drops the mode from the project's set of modes with searches once its
-- pool is empty.
local function forget_if_empty(pool, modes, mode)
  if redis.call('HLEN', pool) == 0 then
    redis.call('SREM', modes, mode)
  end
end

-- Lowers the project's live counter by n, never below zero.
local function decrease_live(live, n)
  if redis.call('DECRBY', live, n) < 0 then
    redis.call('SET', live, 0)
  end
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
  local queued = cjson.decode(search_json)['queuedAt']
  if type(queued) ~= 'number' then
    return json
  end
  return string.sub(json, 1, -2) .. ',"queuedAt":' .. string.format('%.17g', queued) .. '}'
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


-- The player's live search in another mode of the project, as
-- {'player', ticketId, modeName}, or nil: the `playerSearchScope`
-- `project` check. The other modes' `players` hashes are named from the
-- project's set of modes with searches (a mode whose pool is empty holds
-- no live search). They share the project's hash tag, so they are in this
-- script's Cluster slot, though not in its KEYS (which must be known
-- before the script runs).
local function live_elsewhere(modes, mode, player)
  local base = string.sub(modes, 1, #modes - #':modes')
  local names = redis.call('SMEMBERS', modes)
  table.sort(names)
  for _, name in ipairs(names) do
    if name ~= mode then
      local other = redis.call('HGET', base .. ':' .. name .. ':players', player)
      if other then
        return {'player', other, name}
      end
    end
  end
  return nil
end

-- Adds a live search, enforcing one live search per ticket and per player
-- (per mode, or per project with scope 'project'), the spent ticket rule
-- and the project's quota, in one atomic step (the add and the start
-- scripts).
-- keys: pool, players, deadlines, the three ended buckets (current, next,
--       previous), the project's live counter and set of modes
-- ticket, player: ids; entry: the pool entry (JSON); deadline: Unix
-- seconds; limit: the quota ('' = none); mode: the mode's name; scope:
-- 'mode' or 'project' (the project's `playerSearchScope`).
-- Returns {'ok'} | {'active'} | {'matched'} | {'player', ticketId, mode} |
-- {'quota'}
local function add_live(pool, players, deadlines, current, next, previous, live, modes,
                        ticket, player, entry, deadline, limit, mode, scope)
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
  if scope == 'project' then
    local elsewhere = live_elsewhere(modes, mode, player)
    if elsewhere then
      return elsewhere
    end
  end
  if limit ~= '' then
    if tonumber(redis.call('GET', live) or '0') >= tonumber(limit) then
      return {'quota'}
    end
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
  redis.call('INCR', live)
  redis.call('SADD', modes, mode)
  return {'ok'}
end
