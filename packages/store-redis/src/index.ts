/**
 * @partner-yield/store-redis — the core's `RateLimiter` on Redis: the exact rolling window shared
 * by every instance, one Lua script per decision.
 * @module
 */
export {
  checkEvictionPolicy,
  type EvictionPolicyCheck,
  EvictionPolicyError,
  REQUIRED_EVICTION_POLICY,
} from "./eviction-policy.js";
export { FAILED_AUTH_SCRIPT, RATE_LIMIT_BATCH_SCRIPT, RATE_LIMIT_MANY_SCRIPT } from "./rate-limit-script.js";
export {
  connectRedis,
  RATE_LIMIT_BATCH_COMMAND,
  RATE_LIMIT_MANY_COMMAND,
  RETRY_AFTER_SECONDS,
  type RedisConnectionOptions,
  RedisRateLimiter,
  type RedisRateLimiterOptions,
} from "./rate-limiter.js";
