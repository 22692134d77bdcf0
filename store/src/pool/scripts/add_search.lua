-- Adds a live search, enforcing one live search per ticket and per player,
-- the spent ticket rule and the project's quota, in one atomic step.
-- KEYS: 1 pool, 2 players, 3 deadlines, 4 ended (current bucket),
--       5 ended (next), 6 ended (previous), 7 project live, 8 project modes
-- ARGV: 1 ticketId, 2 playerId, 3 search JSON, 4 deadline, 5 limit ('' = none),
--       6 mode name
-- Returns {'ok'} | {'active'} | {'matched'} | {'player', ticketId} | {'quota'}
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return {'active'}
end
local ended = find_ended(KEYS[4], KEYS[5], KEYS[6], ARGV[1])
if is_matched(ended) then
  return {'matched'}
end
local other = redis.call('HGET', KEYS[2], ARGV[2])
if other then
  return {'player', other}
end
if ARGV[5] ~= '' then
  local live = tonumber(redis.call('GET', KEYS[7]) or '0')
  if live >= tonumber(ARGV[5]) then
    return {'quota'}
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
if ended then
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('HDEL', KEYS[5], ARGV[1])
  redis.call('HDEL', KEYS[6], ARGV[1])
end
redis.call('INCR', KEYS[7])
redis.call('SADD', KEYS[8], ARGV[6])
return {'ok'}
