-- Adds a live search (the rules are add_live's, in common.lua).
-- KEYS: 1 pool, 2 players, 3 deadlines, 4 ended (current bucket),
--       5 ended (next), 6 ended (previous), 7 project live, 8 project modes
-- ARGV: 1 ticketId, 2 playerId, 3 search JSON, 4 deadline, 5 limit ('' = none),
--       6 mode name, 7 scope ('mode' | 'project')
-- Returns {'ok'} | {'active'} | {'matched'} | {'player', ticketId, mode} | {'quota'}
return add_live(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8],
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
