-- Revokes a ticket no search started with, in its mode's slot: from now on
-- the add script refuses it, so a start that read the ticket's record
-- before the caller deletes it adds nothing.
-- KEYS: 1 pool, 2 ended (current bucket), 3 ended (next), 4 ended
--       (previous), 5 the mode's revoked tickets
-- ARGV: 1 ticketId, 2 the ticket's expiry, 3 now (Unix seconds)
-- Returns 1 if it is revoked, 0 if a search started with it (it is live,
-- or has ended).
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or find_ended(KEYS[2], KEYS[3], KEYS[4], ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', ARGV[3])
local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('EXPIREAT', KEYS[5], math.ceil(tonumber(last[2])) + 1)
end
return 1
