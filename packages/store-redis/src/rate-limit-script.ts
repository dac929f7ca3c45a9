/**
 * The exact rolling window (CONTRACT §7) as ONE Lua script, so a decision is atomic across every
 * instance sharing Redis: expire the hits older than the window, count, refuse or add. It returns
 * what `MemoryRateLimiter` computes its decision from: allowed, hits counted, and the
 * milliseconds until the hit that must leave (refused) or the oldest hit (allowed) leaves.
 *
 * KEYS[1]: sorted set of counted hits, score = millisecond; KEYS[2]: counter for unique members.
 * ARGV: limit, window (ms), "1" to count the hit or "0" to peek, now (ms; negative: Redis's clock).
 */
export const RATE_LIMIT_SCRIPT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local used = redis.call('ZCARD', KEYS[1])
if used >= limit then
  local wait = 0
  local leaving = redis.call('ZRANGE', KEYS[1], used - limit, used - limit, 'WITHSCORES')
  if leaving[2] then wait = tonumber(leaving[2]) + window - now end
  return {0, used, wait}
end
if ARGV[3] == '1' then
  local seq = redis.call('INCR', KEYS[2])
  redis.call('ZADD', KEYS[1], now, now .. ':' .. seq)
  redis.call('PEXPIRE', KEYS[1], window)
  redis.call('PEXPIRE', KEYS[2], window)
  used = used + 1
end
if used == 0 then return {1, 0, 0} end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {1, used, tonumber(oldest[2]) + window - now}
`;
