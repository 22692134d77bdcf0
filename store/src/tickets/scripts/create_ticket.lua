-- Stores a ticket unless its player has a live search in its mode.
-- KEYS: 1 the mode's players hash (pool store layout), 2 the ticket's key
-- ARGV: 1 playerId, 2 ticket JSON, 3 seconds to keep it
-- Returns {'ok'} | {'player', ticketId}
local other = redis.call('HGET', KEYS[1], ARGV[1])
if other then
  return {'player', other}
end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return {'ok'}
