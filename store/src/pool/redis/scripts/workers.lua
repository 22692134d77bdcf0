-- The live workers: a ZSET workerId -> when its heartbeat lapses (Unix ms,
-- Redis's clock, so workers' clocks never matter).
-- KEYS: 1 workers
-- ARGV: 1 op ('beat' | 'leave'), 2 worker id, then
--   beat:  3 ttl ms -> every worker alive (this one included), by id
--   leave: -> {} (the worker is out at once)
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if ARGV[1] == 'leave' then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return {}
end
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[2])
-- Gone with the last worker: nothing lingers once every worker stopped.
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return redis.call('ZRANGE', KEYS[1], 0, -1)
