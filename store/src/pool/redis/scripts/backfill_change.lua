-- Opens a backfill unless one is there under its id, replaces the roster
-- view of an open backfill, or closes it (docs/backfill.md), in one step with
-- respect to fills (scripts/fill.lua).
--
-- KEYS: 1 backfills (roster views), 2 backfill_seats
-- ARGV: 1 'open', 'replace' or 'close', 2 backfillId, then
--       for 'open': 3 the roster view JSON, 4 the seats field;
--       for 'replace': 3 the roster view JSON, 4 expiresAt, 5 open seats
--       (comma-separated)
-- Returns {'opened'} or {'exists'} (open), else {'unknown'},
-- {'not_open', status} or {'changed', newRevision}.
local cur = redis.call('HGET', KEYS[2], ARGV[2])
if ARGV[1] == 'open' then
  if cur then
    return {'exists'}
  end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
  return {'opened'}
end
if not cur then
  return {'unknown'}
end
local status, revision, expires, seats = string.match(cur, '^(%a+)|(%d+)|([^|]*)|(.*)$')
if status ~= 'open' then
  return {'not_open', status or 'corrupt'}
end
local next_revision = tostring(tonumber(revision) + 1)
if ARGV[1] == 'close' then
  redis.call('HSET', KEYS[2], ARGV[2], 'closed|' .. next_revision .. '|' .. expires .. '|' .. seats)
else
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  redis.call('HSET', KEYS[2], ARGV[2], 'open|' .. next_revision .. '|' .. ARGV[4] .. '|' .. ARGV[5])
end
return {'changed', next_revision}
