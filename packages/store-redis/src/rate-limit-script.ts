/**
 * The exact rolling window (CONTRACT §7) as Lua scripts, ONE per decision, so a decision is atomic
 * across every instance sharing Redis: expire the hits older than the window, count, refuse or add.
 * Each returns what `MemoryRateLimiter` computes its decisions from: the hits counted, and the
 * milliseconds until the hit that must leave (refused) or the oldest hit (allowed) leaves.
 * @module
 */

/** Limit, window and now (Redis's clock when ARGV[4] is negative). */
const NOW = `local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * The failed-authentication window's decision on the sorted set \`zset\` (one member per counted
 * hit: its limit is small) and its counter \`seq\` (Lua expressions).
 */
function windowOn(zset: string, seq: string): string {
  return `redis.call('ZREMRANGEBYSCORE', ${zset}, '-inf', now - window)
local used = redis.call('ZCARD', ${zset})
if used >= limit then
  local wait = 0
  local leaving = redis.call('ZRANGE', ${zset}, used - limit, used - limit, 'WITHSCORES')
  if leaving[2] then wait = tonumber(leaving[2]) + window - now end
  return {0, used, wait}
end
if ARGV[3] == '1' then
  local n = redis.call('INCR', ${seq})
  redis.call('ZADD', ${zset}, now, now .. ':' .. n)
  redis.call('PEXPIRE', ${zset}, window)
  redis.call('PEXPIRE', ${seq}, window)
  used = used + 1
end
if used == 0 then return {1, 0, 0} end
local oldest = redis.call('ZRANGE', ${zset}, 0, 0, 'WITHSCORES')
return {1, used, tonumber(oldest[2]) + window - now}
`;
}

/**
 * The decision of RATE_LIMIT_MANY_SCRIPT as a Lua function `decide(zset, state, limit, window, n)`
 * (with `now` and `hits` in scope), written once for that script and RATE_LIMIT_BATCH_SCRIPT.
 */
const DECIDE = `local function hits(member) return tonumber(string.match(member, ':(%d+)$')) end
local function decide(zset, state, limit, window, n)
  local stored = redis.call('HGET', state, 'u')
  local gone = redis.call('ZRANGEBYSCORE', zset, '-inf', now - window)
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', zset, '-inf', now - window) end
  local used = 0
  if stored then
    used = tonumber(stored)
    for i = 1, #gone do used = used - hits(gone[i]) end
    -- The set lost while the hash was kept: the hits it held are gone with it.
    if used < 0 or (used > 0 and redis.call('EXISTS', zset) == 0) then used = 0 end
  else
    local all = redis.call('ZRANGE', zset, 0, -1)
    for i = 1, #all do used = used + hits(all[i]) end
  end
  local counted = limit - used
  if counted > n then counted = n end
  if counted < 0 then counted = 0 end
  local total = used + counted
  if counted > 0 then
    local run = redis.call('HINCRBY', state, 's', 1)
    redis.call('ZADD', zset, now, run .. ':' .. counted)
    redis.call('HSET', state, 'u', total)
    redis.call('PEXPIRE', zset, window)
    redis.call('PEXPIRE', state, window)
  elseif #gone > 0 or not stored then
    if total == 0 then
      redis.call('DEL', state)
    else
      redis.call('HSET', state, 'u', total)
      -- A hash made again here expires with the set, as the hash a run writes does.
      if not stored then
        local ttl = redis.call('PTTL', zset)
        if ttl > 0 then redis.call('PEXPIRE', state, ttl) end
      end
    end
  end
  local oldestWait = 0
  if total > 0 then
    local oldest = redis.call('ZRANGE', zset, 0, 0, 'WITHSCORES')
    if oldest[2] then oldestWait = tonumber(oldest[2]) + window - now end
  end
  local refusedWait = 0
  if (counted < n or n == 0) and total >= limit then
    -- The hit a refused one waits for: the (total - limit + 1)-th oldest, found run by run.
    local before = total - limit
    local runs = redis.call('ZRANGE', zset, 0, -1, 'WITHSCORES')
    for i = 1, #runs, 2 do
      before = before - hits(runs[i])
      if before < 0 then
        refusedWait = tonumber(runs[i + 1]) + window - now
        break
      end
    end
  end
  return {counted, used, oldestWait, refusedWait}
end
`;

/**
 * N hits of a partner's quota at once (N ≥ 0; 0 is a peek), decided as N hits one after the other
 * at the same instant: the first `limit - used` are counted, the rest refused. What the
 * instances' concurrent requests for one partner cost is then one script run, not one each
 * (`RedisRateLimiter` coalesces the hits of one key made in the same turn of the event loop).
 *
 * The window is stored by run, not by hit: KEYS[1] is a sorted set with one member per run that
 * counted hits (`<run>:<hits>`, score = its millisecond: every hit of a run has the same one),
 * KEYS[2] a hash holding the run counter (`s`) and the hits in the window (`u`). A run costs
 * Redis the same whatever its number of hits or the quota, and the key holds at most `limit`
 * members. When `u` is missing (never written, or lost while the set was kept) it is summed from
 * the set again; when the set is lost while the hash is kept, the window is taken as empty.
 *
 * ARGV: limit, window (ms), n, now (ms; negative: Redis's clock).
 * Returns {counted, used, oldestWait, refusedWait}: the hits counted (the first ones), the hits in
 * the window before them, the milliseconds until the oldest hit leaves (after them; 0 when none),
 * and, when a hit is refused or a peek finds the quota used up, until the hit it waits for leaves.
 */
export const RATE_LIMIT_MANY_SCRIPT = `
${NOW}${DECIDE}return decide(KEYS[1], KEYS[2], limit, window, tonumber(ARGV[3]))`;

/**
 * RATE_LIMIT_MANY_SCRIPT for several partners' keys in one run: what the runs of one turn cost as
 * one command instead of one each (one Lua call, one reply, one command for the client to build and
 * read). Each key is decided exactly as that script decides it alone, at the same instant.
 *
 * KEYS: for each key, its run set then its state hash (2k keys). ARGV[1]: now (ms; negative:
 * Redis's clock); then for key i, ARGV[3i-1], ARGV[3i], ARGV[3i+1]: its limit, window (ms) and n.
 * Returns one reply for each key, in order: {counted, used, oldestWait, refusedWait} as
 * RATE_LIMIT_MANY_SCRIPT, or {-1, message} when Redis refused one of its commands (a key of
 * another type under the prefix, say): that key's hits fail, the others are decided.
 */
export const RATE_LIMIT_BATCH_SCRIPT = `
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
${DECIDE}local out = {}
for i = 1, #KEYS / 2 do
  local a = 3 * i - 1
  local ok, reply = pcall(decide, KEYS[2 * i - 1], KEYS[2 * i], tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]))
  if ok then out[i] = reply else out[i] = {-1, tostring(type(reply) == 'table' and reply.err or reply)} end
end
return out`;

/**
 * The same window for a failed-authentication key (\`auth:\` + an address bucket), whose number
 * is bounded as in \`MemoryRateLimiter\`: an index of the keys with hits in the window (a sorted set,
 * score = when the key's last hit leaves the window) holds at most ARGV[5] of them; a key not in
 * it when it is full is decided on ONE shared overflow key (same limit), so a client with more
 * addresses than that is still limited, and Redis holds at most ARGV[5] + 1 such keys.
 *
 * KEYS[1], KEYS[2]: the key's sorted set and counter; KEYS[3]: the index; KEYS[4], KEYS[5]: the
 * overflow key's sorted set and counter. ARGV[1..4] as above; ARGV[5]: the most keys;
 * ARGV[6]: the key's name in the index.
 */
export const FAILED_AUTH_SCRIPT = `
${NOW}redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local zset, seq = KEYS[1], KEYS[2]
if not redis.call('ZSCORE', KEYS[3], ARGV[6]) and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then
  zset, seq = KEYS[4], KEYS[5]
end
if ARGV[3] == '1' and zset == KEYS[1] then
  redis.call('ZADD', KEYS[3], now + window, ARGV[6])
  redis.call('PEXPIRE', KEYS[3], window)
end
${windowOn("zset", "seq")}`;
