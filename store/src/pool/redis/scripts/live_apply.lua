-- Applies measurements of a project's pools (measure in common.lua) to the
-- project's counter, each unless a newer one of its mode was applied
-- already: a mode measured with searches is listed in `counts` (registered),
-- one measured empty leaves it. Moves the started tickets from the pending
-- ones to the started ones, and gives back a reservation an add did not
-- use.
-- KEYS: 1 project live, 2 project counts, 3 project versions, 4 project
--       pending tickets, 5 project started tickets, 6 (optional) the
--       player's reservation
-- ARGV: 1 the reservation to delete if it is still this one's:
--       '<mode>|<ticketId>|' ('' = none), 2 now (Unix seconds), 3 n, the
--       number of measurements, then n triples (mode name, pool size,
--       version), then pairs (ticketId, its expiry) of the tickets
--       searches were started with.
-- Returns the project's live count.
local n = tonumber(ARGV[3])
for i = 0, n - 1 do
  local mode, size, version = ARGV[4 + 3 * i], ARGV[5 + 3 * i], ARGV[6 + 3 * i]
  if tonumber(version) > tonumber(redis.call('HGET', KEYS[3], mode) or '0') then
    local count = tonumber(size)
    local old = tonumber(redis.call('HGET', KEYS[2], mode) or '0')
    redis.call('HSET', KEYS[3], mode, version)
    if count > 0 then
      redis.call('HSET', KEYS[2], mode, size)
    else
      redis.call('HDEL', KEYS[2], mode)
    end
    if redis.call('INCRBY', KEYS[1], count - old) < 0 then
      redis.call('SET', KEYS[1], 0)
    end
  end
end
local first = 4 + 3 * n
if #ARGV >= first then
  local tickets, scored = {}, {}
  for i = first, #ARGV - 1, 2 do
    tickets[#tickets + 1] = ARGV[i]
    scored[#scored + 1] = ARGV[i + 1]
    scored[#scored + 1] = ARGV[i]
  end
  redis.call('ZREM', KEYS[4], unpack(tickets))
  -- Kept until each ticket expires: trimmed here, and the key lives as
  -- long as its last member.
  redis.call('ZADD', KEYS[5], unpack(scored))
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[2])
  local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('EXPIREAT', KEYS[5], math.ceil(tonumber(last[2])) + 1)
  end
end
if ARGV[1] ~= '' and KEYS[6] then
  local held = redis.call('GET', KEYS[6])
  if held and string.sub(held, 1, #ARGV[1]) == ARGV[1] then
    redis.call('DEL', KEYS[6])
  end
end
return tonumber(redis.call('GET', KEYS[1]) or '0')
