-- Starts a search from a stored ticket, in one round trip: reads the
-- ticket's record, checks the token's hash, mode and expiry against it, and
-- adds the search under add_live's rules (common.lua).
-- KEYS: 1 the ticket's record, 2 pool, 3 players, 4 deadlines, 5 ended
--       (current bucket), 6 ended (next), 7 ended (previous), 8 project
--       live, 9 project modes, 10 project pending tickets (ZSET)
-- ARGV: 1 ticketId, 2 the token's SHA-256 (lower-case hex), 3 mode name,
--       4 now (Unix seconds, a JSON number), 5 'ws' | 'rest', 6 REST poll
--       seconds, 7 limit ('' = none), 8 scope ('mode' | 'project')
-- Returns {'ok', ticketJson} | {'invalid'} | {'layout'} | add_live's refusals
--
-- The record is the ticket's compact serde JSON, whose first fields are the
-- pool entry's (tickets/mod.rs): the entry is the record up to
-- `,"projectId":` plus `,"queuedAt":<now>}`, so serde's number formatting
-- is kept byte for byte (cjson would round mmr to 14 digits). A quote inside
-- a JSON string is always escaped, so the plain finds below can only match
-- keys.
local ticket = redis.call('GET', KEYS[1])
if not ticket then
  return {'invalid'}
end
if not string.find(ticket, '"tokenHash":"' .. ARGV[2] .. '"', 1, true)
  or not string.find(ticket, '"gameMode":"' .. ARGV[3] .. '"', 1, true) then
  return {'invalid'}
end
local now = tonumber(ARGV[4])
local expires = tonumber(string.match(ticket, '"expiresAt":([^,}]+)'))
if not expires or expires <= now then
  return {'invalid'}
end
local head = '{"ticketId":"' .. ARGV[1] .. '","playerId":"'
local cut = string.find(ticket, ',"projectId":', 1, true)
if string.sub(ticket, 1, #head) ~= head or not cut then
  return {'layout'}
end
-- Ids without escapes are read in place; others are decoded.
local player = string.match(ticket, '^([^"\\]*)"', #head + 1)
  or cjson.decode(ticket)['playerId']
local deadline = expires
if ARGV[5] == 'rest' then
  deadline = math.min(now + tonumber(ARGV[6]), expires)
end
local entry = string.sub(ticket, 1, cut - 1) .. ',"queuedAt":' .. ARGV[4] .. '}'
local reply = add_live(KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9],
  ARGV[1], player, entry, deadline, ARGV[7], ARGV[3], ARGV[8])
if reply[1] == 'ok' then
  -- Searching now: no longer a pending ticket.
  redis.call('ZREM', KEYS[10], ARGV[1])
  return {'ok', ticket}
end
return reply
