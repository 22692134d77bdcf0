-- Appends one round trip to a live search's last five samples.
-- KEYS: 1 pool, 2 pings
-- ARGV: 1 ticketId, 2 sample (milliseconds, as text)
-- Returns the samples (comma-separated, oldest first), or nil if not live.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return false
end
local samples = {}
local current = redis.call('HGET', KEYS[2], ARGV[1])
if current then
  for sample in string.gmatch(current, '[^,]+') do
    samples[#samples + 1] = sample
  end
end
samples[#samples + 1] = ARGV[2]
while #samples > 5 do
  table.remove(samples, 1)
end
local joined = table.concat(samples, ',')
redis.call('HSET', KEYS[2], ARGV[1], joined)
return joined
