/**
 * @partner-yield/store-redis/testing — a Redis connection and a key prefix of its own for each test
 * file, every key under it deleted after the file's tests: for this package's tests, the server's,
 * and a team's own tests on the limiter. Built on node:test (`after`) and `ioredis`; the Redis is
 * `PARTNER_YIELD_TEST_REDIS_URL` (default 127.0.0.1:6379).
 * @example
 * import { redisReachable, testRedis } from "@partner-yield/store-redis/testing";
 * if ((await redisReachable()) === undefined) {
 *   const { redis, prefix } = await testRedis("mine"); // keys under prefix deleted after the file
 * }
 * @module
 */
export { deleteKeys, REDIS_URL, redisReachable, type TestRedis, testRedis } from "./redis.js";
