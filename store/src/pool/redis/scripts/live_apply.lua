-- Applies a measurement of a mode's pool (measure in common.lua) to the
-- project's counter, unless a newer one was applied already; and, for the
-- add that measured it, takes its ticket out of the pending tickets and
-- gives back a reservation the add did not use.
-- KEYS: 1 project live, 2 project counts, 3 project versions, 4 project
--       pending tickets, 5 (optional) the player's reservation
-- ARGV: 1 mode name, 2 pool size, 3 version ('' and '' = no measurement),
--       4 ticketId to take out of the pending ones ('' = none), 5 the
--       reservation to delete if it is still this one's: '<mode>|<ticketId>|'
--       ('' = none)
-- Returns the project's live count.
local mode = ARGV[1]
if ARGV[3] ~= '' then
  local count, version = tonumber(ARGV[2]), tonumber(ARGV[3])
  if version > tonumber(redis.call('HGET', KEYS[3], mode) or '0') then
    local old = tonumber(redis.call('HGET', KEYS[2], mode) or '0')
    redis.call('HSET', KEYS[3], mode, ARGV[3])
    if count > 0 then
      redis.call('HSET', KEYS[2], mode, ARGV[2])
    else
      redis.call('HDEL', KEYS[2], mode)
    end
    if redis.call('INCRBY', KEYS[1], count - old) < 0 then
      redis.call('SET', KEYS[1], 0)
    end
  end
end
if ARGV[4] ~= '' then
  redis.call('ZREM', KEYS[4], ARGV[4])
end
if ARGV[5] ~= '' and KEYS[5] then
  local held = redis.call('GET', KEYS[5])
  if held and string.sub(held, 1, #ARGV[5]) == ARGV[5] then
    redis.call('DEL', KEYS[5])
  end
end
return tonumber(redis.call('GET', KEYS[1]) or '0')
