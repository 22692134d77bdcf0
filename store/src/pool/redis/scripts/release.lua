-- Releases a made match's tickets (docs/acceptance.md): each ticket whose ended record
-- says it was matched into this match (or already released from it) gets
-- a `released` record, with its first search's `queuedAt`, so it may start
-- a search again and resume that wait (add_live in common.lua).
-- KEYS: 1 ended (current bucket), 2 ended (next), 3 ended (previous)
-- ARGV: 1 matchId, 2 bucket lifetime (seconds), then per ticket: ticketId,
--       the released record (JSON)
-- Returns the ids of the tickets released (by this call or before).
local needle = '"matchId":"' .. ARGV[1] .. '"'
local released = {}
local records = {}
for i = 3, #ARGV, 2 do
  local ticket = ARGV[i]
  local ended = find_ended(KEYS[1], KEYS[2], KEYS[3], ticket)
  if ended and string.find(ended, needle, 1, true) then
    if is_matched(ended) then
      redis.call('HDEL', KEYS[2], ticket)
      redis.call('HDEL', KEYS[3], ticket)
      records[#records + 1] = ticket
      records[#records + 1] = ARGV[i + 1]
      released[#released + 1] = ticket
    elseif string.find(ended, '"status":"released"', 1, true) then
      released[#released + 1] = ticket
    end
  end
end
if #records > 0 then
  record_ended_each(KEYS[1], ARGV[2], records)
end
return released
