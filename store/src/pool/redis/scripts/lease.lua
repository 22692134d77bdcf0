-- Lease operations on one mode. The lease value is '<token>|<owner>'.
-- KEYS: 1 lease, 2 fence
-- ARGV: 1 op ('acquire' | 'renew' | 'release'), then
--   acquire: 2 owner, 3 ttl ms   -> new token, or nil if held
--   renew:   2 token, 3 ttl ms   -> 1 if still held under token, else 0
--   release: 2 token             -> 1 if it was held under token, else 0
local op = ARGV[1]
if op == 'acquire' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return false
  end
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], token .. '|' .. ARGV[2], 'PX', ARGV[3])
  return token
end
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+)|') ~= ARGV[2] then
  return 0
end
if op == 'renew' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
else
  redis.call('DEL', KEYS[1])
end
return 1
