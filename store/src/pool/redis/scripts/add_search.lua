-- Adds a live search (the rules are add_live's, in common.lua), unless its
-- ticket was revoked (revoke.lua), is in an open proposal (its search
-- ended there and the proposal is still closing), or its player left an
-- open proposal or is cooled down after one: checked here, in the step
-- that adds, so no start slips in while a proposal closes.
-- KEYS: 1 pool, 2 players, 3 deadlines, 4 ended (current bucket),
--       5 ended (next), 6 ended (previous), 7 the mode's live version,
--       8 the mode's revoked tickets, 9 proposals, 10 proposed,
--       11 leaving, 12 cooldowns
-- ARGV: 1 ticketId, 2 playerId, 3 search JSON, 4 deadline, 5 mode name,
--       6 the project's refusal ('' | 'quota' | 'player'), 7 and 8 with
--       'player': the ticket and mode holding the player, 9 now (Unix
--       seconds)
-- Returns add_live's answer, or {'revoked'}, {'active'},
-- {'player', ticketId, mode}, {'cooldown', until}.
if redis.call('ZSCORE', KEYS[8], ARGV[1]) then
  return {'revoked'}
end
local proposal = redis.call('HGET', KEYS[10], ARGV[1])
if proposal and redis.call('HEXISTS', KEYS[9], proposal) == 1 then
  return {'active'}
end
local left = redis.call('HGET', KEYS[11], ARGV[2])
if left then
  local ticket, match = string.match(left, '^(.*)|(.*)$')
  if match and redis.call('HEXISTS', KEYS[9], match) == 1 then
    return {'player', ticket, ARGV[5]}
  end
  redis.call('HDEL', KEYS[11], ARGV[2])
end
local cooled = tonumber(redis.call('HGET', KEYS[12], ARGV[2]) or '0')
if cooled > tonumber(ARGV[9]) then
  return {'cooldown', tostring(cooled)}
end
return add_live(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7],
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
