-- Adds a live search (the rules are add_live's, in common.lua), unless its
-- ticket was revoked (revoke.lua).
-- KEYS: 1 pool, 2 players, 3 deadlines, 4 ended (current bucket),
--       5 ended (next), 6 ended (previous), 7 the mode's live version,
--       8 the mode's revoked tickets
-- ARGV: 1 ticketId, 2 playerId, 3 search JSON, 4 deadline, 5 mode name,
--       6 the project's refusal ('' | 'quota' | 'player'), 7 and 8 with
--       'player': the ticket and mode holding the player
-- Returns add_live's answer, or {'revoked'}.
if redis.call('ZSCORE', KEYS[8], ARGV[1]) then
  return {'revoked'}
end
return add_live(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7],
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
