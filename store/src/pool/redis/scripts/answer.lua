-- Records a ticket's answer in its open proposal (idempotent). A decline is
-- final: an accept after it is answered as closed. So is any answer at or
-- after the proposal's acceptBy, whether or not anyone has closed it yet
-- (checked here, where the answer would be recorded, so no sweep can be
-- raced past).
-- A decline after another member's decline of the same proposal is
-- answered as closed, not recorded: the first decline ends it.
-- KEYS: 1 proposed, 2 answers, 3 proposal deadlines, 4 proposals
-- An answer that names its proposal (ARGV[5]) counts only in that one:
-- another proposal of the ticket, open or last answered, is left alone.
-- ARGV: 1 ticketId, 2 'accept' | 'decline', 3 answers lifetime (seconds),
--       4 now (Unix seconds), 5 the named matchId ('' for whichever)
-- Returns {'open', matchId} | {'closed', matchId, '1' (same answer) | '0'}
--       | {'not_proposed'} | {'other'} (not in the named proposal)
local open = redis.call('HGET', KEYS[1], ARGV[1])
local last = redis.call('HGET', KEYS[2], ARGV[1])
local last_match, last_word
if last then
  last_match, last_word = string.match(last, '^(.*)|(%a+)$')
end
local named = ARGV[5]
if named ~= '' then
  if open ~= named then open = false end
  if last_match ~= named then last_match = nil end
  if not open and not last_match then
    return {'other'}
  end
end
if open then
  if last_match == open and last_word == 'decline' and ARGV[2] ~= 'decline' then
    return {'closed', open, '0'}
  end
  local by = tonumber(redis.call('ZSCORE', KEYS[3], open))
  if by and tonumber(ARGV[4]) >= by then
    if last_match == open and last_word == ARGV[2] then
      return {'closed', open, '1'}
    end
    return {'closed', open, '0'}
  end
  if ARGV[2] == 'decline' and not (last_match == open and last_word == 'decline') then
    local proposal = redis.call('HGET', KEYS[4], open)
    if proposal then
      for _, member in ipairs(cjson.decode(proposal)['members'] or {}) do
        local other = member[1]
        if other ~= ARGV[1] and redis.call('HGET', KEYS[2], other) == open .. '|decline' then
          return {'closed', open, '0'}
        end
      end
    end
  end
  redis.call('HSET', KEYS[2], ARGV[1], open .. '|' .. ARGV[2])
  redis.call('EXPIRE', KEYS[2], ARGV[3])
  return {'open', open}
end
if last_match then
  if last_word == ARGV[2] then
    return {'closed', last_match, '1'}
  end
  return {'closed', last_match, '0'}
end
return {'not_proposed'}
