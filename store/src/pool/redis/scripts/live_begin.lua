-- The project's part of adding a search under the `project`
-- playerSearchScope, in the project's slot, before the add script runs in
-- the mode's slot: the quota, the mode registered among the project's modes
-- with searches, and the player's reservation (the `mode` scope's part is
-- a read of the counter, see live.rs).
-- KEYS: 1 project live, 2 project counts, 3 the player's reservation
-- ARGV: 1 mode name, 2 limit ('' = none), 3 ticketId, 4 now (Unix
--       seconds), 5 reservation lifetime (seconds), 6 a reservation the
--       caller found stale and takes over ('' = none)
-- Returns {'ok', 1 if the mode was registered now else 0} (reserved, when
-- KEYS[3] is given) | {'quota'} (nothing
-- written) | {'held', reservation} (another search holds the player;
-- nothing written: the caller checks it and may call again with it as
-- ARGV[6]).
if ARGV[2] ~= '' and tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[2]) then
  return {'quota'}
end
if KEYS[3] then
  local mine = ARGV[1] .. '|' .. ARGV[3] .. '|'
  local held = redis.call('GET', KEYS[3])
  if held and string.sub(held, 1, #mine) ~= mine and held ~= ARGV[6] then
    return {'held', held}
  end
  redis.call('SET', KEYS[3], mine .. ARGV[4], 'EX', ARGV[5])
end
return {'ok', redis.call('HSETNX', KEYS[2], ARGV[1], '0')}
