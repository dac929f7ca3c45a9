/**
 * The whole API suite again, on PostgreSQL (events, keys, partners, products, positions, prices,
 * loaded with the sandbox fixtures) and Redis (rate limits): what a deployment with
 * `--database-url` and `--redis-url` serves must be exactly what the in-memory defaults serve.
 */
import { uniqueTag } from "@partner-yield/core/testing";
import { gate, inProcess, loadSandbox, runApiSuite } from "@partner-yield/node-adapter/testing";
import { createPostgresStores, dataSetOf, importData } from "@partner-yield/store-postgres";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { RedisRateLimiter } from "@partner-yield/store-redis";
import { redisReachable, testRedis } from "@partner-yield/store-redis/testing";

const { available } = gate({ PostgreSQL: await postgresReachable(), Redis: await redisReachable() });

if (available) {
  const db = await testDatabase("apisuite");
  await importData(db.pool, dataSetOf(loadSandbox()));
  const { redis, prefix } = await testRedis("apisuite");
  // A fresh key prefix per limiter: each API of the suite starts with an empty window.
  const rateLimiter = async () => new RedisRateLimiter({ redis, keyPrefix: `${prefix}${uniqueTag()}:` });
  runApiSuite("PostgreSQL + Redis stores, in-process", inProcess, {
    stores: async () => {
      const { events, keys, partners, products, positions, prices } = createPostgresStores(db.pool);
      return { events, keys, partners, products, positions, prices, rateLimiter: await rateLimiter() };
    },
    rateLimiter,
  });
}
