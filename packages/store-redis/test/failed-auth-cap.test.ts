/**
 * Failed-authentication keys in Redis are bounded in number as in memory: past
 * `maxFailedAuthAddresses`, new addresses share one overflow bucket with the same limit, known
 * addresses keep theirs, and expired ones make room again. And the `maxmemory-policy` check: only
 * `noeviction` is accepted; a Redis that refuses CONFIG is reported unchecked.
 */
import assert from "node:assert/strict";
import { test as plainTest } from "node:test";
import { FAILED_AUTH_OVERFLOW_KEY } from "@partner-yield/core/backends";
import { gate } from "@partner-yield/node-adapter/testing";
import { redisReachable, testRedis } from "@partner-yield/store-redis/testing";
import type { Redis } from "ioredis";
import { checkEvictionPolicy, EvictionPolicyError, RedisRateLimiter } from "../src/index.js";

const { test, available } = gate({ Redis: await redisReachable() });
const shared = available ? await testRedis("failed-auth-cap") : undefined;
const WINDOW = 60_000;

async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    found.push(...keys);
    cursor = next;
  } while (cursor !== "0");
  return found;
}

test("past the cap, new addresses share one bucket with the same limit; known addresses keep theirs", async () => {
  const c = { now: 1_000_000 };
  const prefix = `${shared!.prefix}cap:`;
  const limiter = new RedisRateLimiter({
    redis: shared!.redis,
    keyPrefix: prefix,
    now: () => c.now,
    maxFailedAuthAddresses: 3,
  });
  for (const a of ["a", "b", "c"]) assert.equal((await limiter.hit(`auth:${a}`, 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:d", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:e", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:f", 2, WINDOW)).allowed, false, "d, e, f share one bucket of 2");
  assert.equal((await limiter.peek("auth:g", 2, WINDOW)).allowed, false, "a peek of a new address sees it");
  assert.equal((await limiter.peek(FAILED_AUTH_OVERFLOW_KEY, 2, WINDOW)).remaining, 0);
  assert.equal((await limiter.hit("auth:a", 2, WINDOW)).allowed, true, "a known address has its own count");
  assert.equal((await limiter.hit("auth:a", 2, WINDOW)).allowed, false);
  for (let p = 0; p < 10; p++)
    assert.equal((await limiter.hit(`rate:p${p}:sandbox`, 1, WINDOW)).allowed, true, "quotas are not pooled");
  c.now += WINDOW + 1000;
  assert.equal((await limiter.hit("auth:h", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:h", 2, WINDOW)).allowed, true);
  assert.equal((await limiter.hit("auth:h", 2, WINDOW)).allowed, false, "h has a bucket of its own");
  assert.equal((await limiter.hit("auth:i", 2, WINDOW)).allowed, true, "and i is not blocked by h");
});

test("1,000 addresses with a cap of 10: Redis holds at most 10 addresses' keys, the overflow key and the index", async () => {
  const prefix = `${shared!.prefix}many:`;
  const limiter = new RedisRateLimiter({
    redis: shared!.redis,
    keyPrefix: prefix,
    maxFailedAuthAddresses: 10,
  });
  const allowed: boolean[] = [];
  for (let i = 0; i < 1000; i++) {
    allowed.push((await limiter.hit(`auth:2001:db8:${i.toString(16)}::/64`, 3, WINDOW)).allowed);
  }
  assert.deepEqual(allowed.slice(0, 13), Array(13).fill(true), "10 own buckets, then 3 in the overflow");
  assert.deepEqual(allowed.slice(13), Array(987).fill(false), "still limited");
  const keys = await keysUnder(shared!.redis, prefix);
  // Each address: a sorted set and its counter; the overflow likewise; one index.
  assert.ok(keys.length <= 2 * 10 + 2 + 1, `${keys.length} keys`);
  assert.ok(
    keys.every((k) => k.startsWith(`${prefix}{auth}:`)),
    "one hash tag: one Redis Cluster slot for the script's keys",
  );
  const ttls = await Promise.all(keys.map((k) => shared!.redis.pttl(k)));
  assert.ok(
    ttls.every((t) => t > 0 && t <= WINDOW),
    "every key expires within the window",
  );
});

plainTest(
  "the maxmemory-policy check: noeviction passes, any evicting policy throws, a refused CONFIG is unchecked",
  async () => {
    const answering = (reply: unknown) => ({ config: async () => reply }) as unknown as Redis;
    assert.deepEqual(await checkEvictionPolicy(answering(["maxmemory-policy", "noeviction"])), {
      checked: true,
      policy: "noeviction",
    });
    for (const policy of [
      "allkeys-lru",
      "allkeys-lfu",
      "allkeys-random",
      "volatile-lru",
      "volatile-lfu",
      "volatile-random",
      "volatile-ttl",
    ])
      await assert.rejects(
        checkEvictionPolicy(answering(["maxmemory-policy", policy])),
        (error: Error) => error instanceof EvictionPolicyError && error.message.includes(policy),
        policy,
      );
    const refusing = {
      config: async () => {
        throw new Error("ERR unknown command 'CONFIG'");
      },
    } as unknown as Redis;
    const unchecked = await checkEvictionPolicy(refusing);
    assert.equal(unchecked.checked, false);
    assert.equal((await checkEvictionPolicy(answering([]))).checked, false);
  },
);

test("the test Redis itself runs with noeviction", async () => {
  assert.deepEqual(await checkEvictionPolicy(shared!.redis), { checked: true, policy: "noeviction" });
});
