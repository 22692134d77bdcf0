-- Applies a proposal's closing, decided by the caller from a read of it,
-- only if every member still stands as read (compare-and-set): same
-- answer, search still live or still ended. An answer, a cancel or another
-- closing in between makes it 'stale' (read again) or 'closed'.
--
-- KEYS: 1 proposals, 2 proposal deadlines, 3 proposed, 4 answers, 5 pool,
--       6 players, 7 deadlines, 8 pings, 9 reasons, 10 outbox,
--       11 cooldowns, 12 ended (current bucket), 13 ended (next),
--       14 ended (previous), 15 leaving
-- ARGV: 1 matchId, 2 bucket lifetime (seconds), 3 cooldown end (Unix
--       seconds), 4 record JSON ('' unless the match is made),
--       then per member: ticketId, playerId, answer word read, fate
--       ('matched' | 'requeued' | 'ended' | 'fail'), '1' if cooled down,
--       ended JSON ('' for 'requeued' and 'ended')
-- Returns {'closed'} | {'stale'} | {'done', outboxId or ''}
local match = ARGV[1]
if redis.call('HEXISTS', KEYS[1], match) == 0 then
  return {'closed'}
end
local first = 5
for i = first, #ARGV, 6 do
  local now = answer_now(KEYS[6], KEYS[4], KEYS[12], KEYS[13], KEYS[14], match, ARGV[i], ARGV[i + 1])
  if now ~= ARGV[i + 2] then
    return {'stale'}
  end
end
local removed = 0
local records = {}
local cooled = false
for i = first, #ARGV, 6 do
  local ticket, player, fate = ARGV[i], ARGV[i + 1], ARGV[i + 3]
  if redis.call('HGET', KEYS[3], ticket) == match then
    redis.call('HDEL', KEYS[3], ticket)
  end
  if redis.call('HGET', KEYS[15], player) == ticket .. '|' .. match then
    redis.call('HDEL', KEYS[15], player)
  end
  if fate == 'matched' or fate == 'fail' then
    local search = redis.call('HGET', KEYS[5], ticket)
    if search then
      remove_live(KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], ticket, search)
      records[#records + 1] = ticket
      records[#records + 1] = with_queued_at(ARGV[i + 5], search)
      removed = removed + 1
    end
  end
  if ARGV[i + 4] == '1' then
    redis.call('HSET', KEYS[11], player, ARGV[3])
    cooled = true
  end
end
redis.call('HDEL', KEYS[1], match)
redis.call('ZREM', KEYS[2], match)
if cooled then
  redis.call('EXPIRE', KEYS[11], 3700)
end
local outbox = ''
if ARGV[4] ~= '' then
  outbox = redis.call('XADD', KEYS[10], '*', 'matchId', match, 'record', ARGV[4])
end
if removed > 0 then
  record_ended_each(KEYS[12], ARGV[2], records)
end
return {'done', outbox}
