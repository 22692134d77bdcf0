
-- A proposal member's answer now (proposal.lua and finish_proposal.lua):
-- its recorded word while its search is live, else 'failed' (ended by the
-- service: failed, or cancelled with reason SERVER_STOPPING, as
-- EndedSearch::ended_by_service) or 'gone' (cancelled, expired).
-- keys: players, answers, the three ended buckets
local function answer_now(players, answers, current, next, previous, match, ticket, player)
  if redis.call('HGET', players, player) ~= ticket then
    local ended = find_ended(current, next, previous, ticket)
    if ended then
      local record = cjson.decode(ended)
      if record['status'] == 'failed'
        or (record['status'] == 'cancelled' and record['reason'] == 'SERVER_STOPPING') then
        return 'failed'
      end
    end
    return 'gone'
  end
  local last = redis.call('HGET', answers, ticket)
  if last then
    local m, w = string.match(last, '^(.*)|(%a+)$')
    if m == match then
      return w
    end
  end
  return 'pending'
end
