-- Reads up to `count` outbox entries for a consumer: first its own entries
-- it has not acknowledged (a store that failed: tried again at once, not
-- after min_idle), then the entries idle for at least min_idle ms (a dead
-- consumer's, taken over by XAUTOCLAIM), then new ones. Creates the consumer group on first use, and removes the
-- consumers of workers that are gone: each worker start reads under a new
-- consumer name, so a consumer idle for min_idle ms with nothing pending is
-- deleted (a live one that is only slow is made again by its next read,
-- and loses nothing: it held no entry).
-- KEYS: 1 outbox
-- ARGV: 1 group, 2 consumer, 3 count, 4 min idle ms
-- Returns {id, matchId, record, id, matchId, record, ...}
pcall(redis.call, 'XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
local count = tonumber(ARGV[3])
local out = {}
local seen = {}
local function push(entries)
  for _, entry in ipairs(entries) do
    local fields = {}
    local kv = entry[2] or {}
    for i = 1, #kv - 1, 2 do
      fields[kv[i]] = kv[i + 1]
    end
    if fields['record'] and not seen[entry[1]] then
      seen[entry[1]] = true
      out[#out + 1] = entry[1]
      out[#out + 1] = fields['matchId'] or ''
      out[#out + 1] = fields['record']
    elseif not entry[2] then
      -- Pending, but gone from the stream: nothing to store.
      redis.call('XACK', KEYS[1], ARGV[1], entry[1])
    end
  end
end
local own = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', count, 'STREAMS', KEYS[1], '0')
if own and own[1] then
  push(own[1][2])
end
local left = count - #out / 3
if left > 0 then
  local claimed = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[4], '0-0', 'COUNT', left)
  push(claimed[2])
end
left = count - #out / 3
if left > 0 then
  local fresh = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', left, 'STREAMS', KEYS[1], '>')
  if fresh then
    push(fresh[1][2])
  end
end
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if ok then
  for _, consumer in ipairs(consumers) do
    local info = {}
    for i = 1, #consumer - 1, 2 do
      info[consumer[i]] = consumer[i + 1]
    end
    if info['name'] ~= ARGV[2] and tonumber(info['pending']) == 0
        and tonumber(info['idle']) >= tonumber(ARGV[4]) then
      redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    end
  end
end
return out
