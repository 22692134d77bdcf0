-- Ends a live search as cancelled, expired or failed. A search in an open
-- proposal leaves its player marked `leaving` until the proposal closes
-- (the add script refuses the player meanwhile).
-- KEYS: 1 pool, 2 players, 3 deadlines, 4 pings, 5 reasons,
--       6 ended (current bucket), 7 ended (next), 8 ended (previous),
--       9 proposed, 10 leaving
-- ARGV: 1 ticketId, 2 ended JSON, 3 bucket lifetime (seconds)
-- Returns {'ended'} | {'matched', endedJson} | {'not_live'}
local search = redis.call('HGET', KEYS[1], ARGV[1])
if not search then
  local ended = find_ended(KEYS[6], KEYS[7], KEYS[8], ARGV[1])
  if is_matched(ended) then
    return {'matched', ended}
  end
  return {'not_live'}
end
remove_live(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], search)
local proposal = redis.call('HGET', KEYS[9], ARGV[1])
if proposal then
  local player = cjson.decode(search)['playerId']
  if player then
    redis.call('HSET', KEYS[10], player, ARGV[1] .. '|' .. proposal)
    redis.call('EXPIRE', KEYS[10], 3700)
  end
end
record_ended_each(KEYS[6], ARGV[3], {ARGV[1], with_queued_at(ARGV[2], search)})
return {'ended'}
