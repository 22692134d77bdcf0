-- Forgets a project in the registry of projects with searches, unless a
-- search was added in it after `cutoff` (the caller found the project's set
-- of modes empty; an add since then has moved its score past the cutoff,
-- or writes it again after this).
-- KEYS: 1 the registry (ZSET projectId -> last add, Unix seconds)
-- ARGV: 1 projectId, 2 cutoff (Unix seconds)
-- Returns 1 if it was forgotten, else 0.
local added = redis.call('ZSCORE', KEYS[1], ARGV[1])
if added and tonumber(added) <= tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
