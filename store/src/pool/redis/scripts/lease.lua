-- Lease operations on one mode. The lease value is '<token>|<owner>'.
-- KEYS: 1 lease, 2 fence; for probe also 3 pool, 4 outbox, 5 proposals,
--   6 backfill_seats
-- ARGV: 1 op ('acquire' | 'renew' | 'probe' | 'release'), then
--   acquire: 2 owner, 3 ttl ms, 4 epoch -> new token, or nil if held
--   renew:   2 token, 3 ttl ms   -> 1 if still held under token, else 0
--   probe:   2 token, 3 ttl ms   -> renew, then {1, searches, outbox
--            entries, proposals, backfills} if held, else nil (the cycle's
--            one round trip when the mode is idle)
--   release: 2 token             -> 1 if it was held under token, else 0
--
-- A token is epoch * 2^32 + the mode's fence counter. The epoch is the
-- acquiring worker's own (taken from the database once per worker start,
-- never twice the same), so a token names its holder: when Redis loses its
-- data the counter restarts, but a token drawn afterwards by another worker
-- differs from every token drawn before, and an old holder's renewal or
-- claim finds the lease gone or someone else's (the token checks the owner
-- as well). Tokens stay below 2^53 (epochs below 2^21), exact in Lua.
local op = ARGV[1]
if op == 'acquire' then
  if redis.call('EXISTS', KEYS[1]) == 1 then
    return false
  end
  local counter = redis.call('INCR', KEYS[2]) % 4294967296
  local token = string.format('%d', tonumber(ARGV[4]) * 4294967296 + counter)
  redis.call('SET', KEYS[1], token .. '|' .. ARGV[2], 'PX', ARGV[3])
  return token
end
local lease = redis.call('GET', KEYS[1])
if not lease or string.match(lease, '^(%d+)|') ~= ARGV[2] then
  if op == 'probe' then
    return false
  end
  return 0
end
if op == 'renew' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
elseif op == 'probe' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {
    1,
    redis.call('HLEN', KEYS[3]),
    redis.call('XLEN', KEYS[4]),
    redis.call('HLEN', KEYS[5]),
    redis.call('HLEN', KEYS[6]),
  }
else
  redis.call('DEL', KEYS[1])
end
return 1
