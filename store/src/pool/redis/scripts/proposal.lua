-- An open proposal and each member's answer now (answer_now, in
-- proposal_common.lua).
-- KEYS: 1 proposals, 2 players, 3 answers, 4 ended (current bucket),
--       5 ended (next), 6 ended (previous)
-- ARGV: 1 matchId
-- Returns {} once closed, else {proposal JSON, answer word per member}.
local meta = redis.call('HGET', KEYS[1], ARGV[1])
if not meta then
  return {}
end
local reply = {meta}
for _, m in ipairs(cjson.decode(meta)['members']) do
  reply[#reply + 1] = answer_now(KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[1], m[1], m[2])
end
return reply
