/**
 * A Redis key prefix of a benchmark's own, for servers started with `--redis-url` and
 * `--redis-key-prefix`: Redis at `PARTNER_YIELD_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`,
 * as the tests use), checked at start, and every key under the prefix deleted at the end (the
 * rate-limit keys would expire with their window anyway; this leaves nothing behind at once).
 * @module
 */
import { uniqueTag } from "../packages/core/src/testing/index.js";
import { connectRedis } from "../packages/store-redis/src/index.js";

/** Where the benchmarks find Redis. */
export const REDIS_URL = process.env["PARTNER_YIELD_TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379";

/** How to get a Redis the benchmarks can use, for the error when there is none. */
const HOW_TO_START_REDIS =
  'start it (`redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`, ' +
  "as .ci/run does), or point PARTNER_YIELD_TEST_REDIS_URL at yours";

/** Redis could not be reached at the benchmark's URL. */
export class RedisUnreachableError extends Error {
  readonly code = "redis_unreachable";
  constructor(url: string, cause: unknown) {
    super(
      `Redis is not reachable at ${url.replace(/\/\/[^@/]*@/, "//***@")} (${(cause as Error)?.message ?? String(cause)}); ${HOW_TO_START_REDIS}`,
      { cause },
    );
    this.name = "RedisUnreachableError";
  }
}

export interface BenchRedis {
  readonly url: string;
  /** `py-bench:<random>:`: what the servers are given as `--redis-key-prefix`. */
  readonly prefix: string;
  /** Deletes every key under the prefix and disconnects; safe to call more than once. */
  readonly clear: () => Promise<void>;
}

/**
 * Connects to Redis and picks a prefix of this run's own.
 * @throws RedisUnreachableError when Redis does not answer.
 * @example const redis = await benchRedis(); try { … "--redis-key-prefix", redis.prefix … } finally { await redis.clear(); }
 */
export async function benchRedis(url: string = REDIS_URL): Promise<BenchRedis> {
  let client: Awaited<ReturnType<typeof connectRedis>>;
  try {
    client = await connectRedis({ url, commandTimeoutMs: 5000 });
    await client.ping();
  } catch (error) {
    throw new RedisUnreachableError(url, error);
  }
  const prefix = `py-bench:${uniqueTag()}:`;
  let clearing: Promise<void> | undefined;
  const clear = () => {
    clearing ??= (async () => {
      try {
        let cursor = "0";
        do {
          const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
          if (keys.length > 0) await client.del(...keys);
          cursor = next;
        } while (cursor !== "0");
      } finally {
        client.disconnect();
      }
    })();
    return clearing;
  };
  return { url, prefix, clear };
}
