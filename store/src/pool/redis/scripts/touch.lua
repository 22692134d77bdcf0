-- Moves a live search's deadline. The deadline index may still hold entries
-- of searches claimed since (claims leave them to the expiry sweep), so
-- liveness is read from the pool.
-- KEYS: 1 pool, 2 deadlines
-- ARGV: 1 ticketId, 2 deadline (Unix seconds)
-- Returns 1 if the search is live (and now has that deadline), else 0.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
