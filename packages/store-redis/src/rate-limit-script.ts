/**
 * The exact rolling window (CONTRACT §7) as Lua scripts, ONE per decision, so a decision is atomic
 * across every instance sharing Redis: expire the hits older than the window, count, refuse or add.
 * Each returns what `MemoryRateLimiter` computes its decision from: allowed, hits counted, and the
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

/** The window's decision on the sorted set \`zset\` and its counter \`seq\` (Lua expressions). */
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
 * A partner's quota (any key).
 *
 * KEYS[1]: sorted set of counted hits, score = millisecond; KEYS[2]: counter for unique members.
 * ARGV: limit, window (ms), "1" to count the hit or "0" to peek, now (ms; negative: Redis's clock).
 */
export const RATE_LIMIT_SCRIPT = `
${NOW}${windowOn("KEYS[1]", "KEYS[2]")}`;

/**
 * N hits of a partner's quota at once, decided as N hits one after the other at the same instant:
 * the first `limit - used` are counted, the rest refused. What the instances' concurrent requests
 * for one partner cost is then one script run, not one each (`RedisRateLimiter` coalesces the
 * hits of one key made in the same turn of the event loop).
 *
 * KEYS as RATE_LIMIT_SCRIPT; ARGV: limit, window (ms), n (≥ 1), now (ms; negative: Redis's clock).
 * Returns {counted, used, oldestWait, refusedWait}: the hits counted (the first ones), the hits in
 * the window before them, the milliseconds until the oldest hit leaves (after them), and until
 * the hit a refused one waits for leaves.
 */
export const RATE_LIMIT_MANY_SCRIPT = `
${NOW}local n = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local used = redis.call('ZCARD', KEYS[1])
local counted = limit - used
if counted > n then counted = n end
if counted < 0 then counted = 0 end
if counted > 0 then
  local last = redis.call('INCRBY', KEYS[2], counted)
  local args = {}
  for i = 1, counted do
    args[#args + 1] = now
    args[#args + 1] = now .. ':' .. (last - counted + i)
  end
  redis.call('ZADD', KEYS[1], unpack(args))
  redis.call('PEXPIRE', KEYS[1], window)
  redis.call('PEXPIRE', KEYS[2], window)
end
local total = used + counted
local oldestWait = 0
if total > 0 then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  oldestWait = tonumber(oldest[2]) + window - now
end
local refusedWait = 0
if counted < n and total >= limit then
  local leaving = redis.call('ZRANGE', KEYS[1], total - limit, total - limit, 'WITHSCORES')
  if leaving[2] then refusedWait = tonumber(leaving[2]) + window - now end
end
return {counted, used, oldestWait, refusedWait}`;

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
