/**
 * A Redis connection for a test file, a key prefix no other run uses, and the deletion of every
 * key under it after the file's tests (node:test's `after`).
 */
import { after } from "node:test";
import { uniqueTag } from "@partner-yield/core/testing";
import { Redis } from "ioredis";
import { connectRedis } from "../index.js";

/** The Redis the tests use: `PARTNER_YIELD_TEST_REDIS_URL`, by default 127.0.0.1:6379. */
export const REDIS_URL = process.env["PARTNER_YIELD_TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379";

/** Why Redis is unreachable at REDIS_URL, or undefined when it answers (within 3 s). */
export async function redisReachable(): Promise<string | undefined> {
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    redis.disconnect();
  }
}

export interface TestRedis {
  readonly redis: Redis;
  /** `py-stores:<tag>:<random>:`, removed with everything under it after the file's tests. */
  readonly prefix: string;
}

/** A connection to REDIS_URL and a fresh prefix named after `tag`, cleaned up after the file's tests. */
export async function testRedis(tag: string): Promise<TestRedis> {
  const redis = await connectRedis({ url: REDIS_URL, commandTimeoutMs: 5000 });
  const prefix = `py-stores:${tag}:${uniqueTag()}:`;
  after(async () => {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });
  return { redis, prefix };
}

/** Deletes every key under `prefix` (SCAN, not KEYS, so a shared Redis is not blocked). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}
