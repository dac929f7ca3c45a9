/** The core's rate-limiter conformance suite against Redis: the same decisions as the in-memory limiter. */
import { runRateLimiterSuite } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import { RedisRateLimiter } from "../src/index.js";

const { describe, test, available } = gate({ Redis: await redisReachable() });
const shared = available ? await testRedis("conformance") : undefined;

runRateLimiterSuite({
  name: "redis",
  makeLimiter: async (now) => new RedisRateLimiter({ redis: shared!.redis, keyPrefix: shared!.prefix, now }),
  describe,
  test,
});
