-- Ends as expired the given searches whose deadline is still due (the caller
-- read them with ZRANGEBYSCORE; one may have been touched or ended since).
-- A search in an open proposal waits for it: its deadline moves to the
-- proposal's acceptBy, and the first sweep after the proposal ends decides.
-- KEYS: 1 pool, 2 players, 3 deadlines, 4 pings, 5 reasons, 6 ended
--       (current bucket), 7 proposed, 8 proposal deadlines
-- ARGV: 1 now, 2 ended JSON, 3 bucket lifetime (seconds), 4 due by (a
--       deadline after it is not due yet; at most now), 5.. ticketIds
-- Returns the ticketIds expired.
local now = tonumber(ARGV[1])
local due_by = tonumber(ARGV[4])
local expired = {}
local records = {}
for i = 5, #ARGV do
  local ticket = ARGV[i]
  local deadline = redis.call('ZSCORE', KEYS[3], ticket)
  local search = redis.call('HGET', KEYS[1], ticket)
  local proposal = search and redis.call('HGET', KEYS[7], ticket)
  if proposal then
    local by = redis.call('ZSCORE', KEYS[8], proposal)
    redis.call('ZADD', KEYS[3], math.max(tonumber(by or now), now + 1), ticket)
  elseif search and deadline and tonumber(deadline) <= due_by then
    remove_live(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ticket, search)
    expired[#expired + 1] = ticket
    records[#records + 1] = ticket
    records[#records + 1] = with_queued_at(ARGV[2], search)
  elseif deadline and not search then
    redis.call('ZREM', KEYS[3], ticket)
  end
end
if #expired > 0 then
  record_ended_each(KEYS[6], ARGV[3], records)
end
return expired
