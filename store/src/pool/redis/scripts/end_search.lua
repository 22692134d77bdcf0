-- Ends a live search as cancelled, expired or failed.
-- KEYS: 1 pool, 2 players, 3 deadlines, 4 pings, 5 reasons,
--       6 ended (current bucket), 7 ended (next), 8 ended (previous)
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
record_ended_each(KEYS[6], ARGV[3], {ARGV[1], with_queued_at(ARGV[2], search)})
return {'ended'}
