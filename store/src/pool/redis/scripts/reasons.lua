-- Stores the last cycle's waitingReason of each search still live.
-- KEYS: 1 pool, 2 reasons
-- ARGV: ticketId, reason JSON, ticketId, reason JSON, ...
-- Returns how many were stored.
local stored = 0
for i = 1, #ARGV - 1, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
    stored = stored + 1
  end
end
return stored
