-- Applies measurements of a project's pools (measure in common.lua) to the
-- project's counter, each unless a newer one of its mode was applied
-- already: a mode measured with searches is listed in `counts` (registered),
-- one measured empty leaves it. Takes the started tickets out of the
-- pending ones, and gives back a reservation an add did not use.
-- KEYS: 1 project live, 2 project counts, 3 project versions, 4 project
--       pending tickets, 5 (optional) the player's reservation
-- ARGV: 1 the reservation to delete if it is still this one's:
--       '<mode>|<ticketId>|' ('' = none), 2 n, the number of measurements,
--       then n triples (mode name, pool size, version), then the tickets to
--       take out of the pending ones.
-- Returns the project's live count.
local n = tonumber(ARGV[2])
for i = 0, n - 1 do
  local mode, size, version = ARGV[3 + 3 * i], ARGV[4 + 3 * i], ARGV[5 + 3 * i]
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
local first = 3 + 3 * n
if #ARGV >= first then
  redis.call('ZREM', KEYS[4], unpack(ARGV, first))
end
if ARGV[1] ~= '' and KEYS[5] then
  local held = redis.call('GET', KEYS[5])
  if held and string.sub(held, 1, #ARGV[1]) == ARGV[1] then
    redis.call('DEL', KEYS[5])
  end
end
return tonumber(redis.call('GET', KEYS[1]) or '0')
