/** The shipped store conformance suites (`@partner-yield/core/testing`) against the in-memory defaults. */
import { describe, test } from "node:test";
import {
  MemoryEventStore,
  MemoryKeyStore,
  MemoryPartnerStore,
  MemoryPositionSource,
  MemoryPriceSource,
  MemoryProductSource,
  MemoryRateLimiter,
} from "../src/index.js";
import {
  runEventStoreSuite,
  runKeyStoreSuite,
  runPartnerStoreSuite,
  runProductSourceSuite,
  runRateLimiterSuite,
  type StoreSeed,
} from "../src/testing/index.js";

runEventStoreSuite({ name: "memory", makeStore: async () => new MemoryEventStore(), describe, test });

runRateLimiterSuite({
  name: "memory",
  makeLimiter: async (now) => new MemoryRateLimiter(now === undefined ? {} : { now }),
  describe,
  test,
});

const memoryStores = async (seed: StoreSeed) => ({
  keys: new MemoryKeyStore(seed.keys),
  partners: new MemoryPartnerStore(seed.partners),
  products: new MemoryProductSource(seed.products),
  positions: new MemoryPositionSource(seed.vaults),
  prices: new MemoryPriceSource(seed.prices),
  close: () => Promise.resolve(),
});
for (const run of [runKeyStoreSuite, runPartnerStoreSuite, runProductSourceSuite])
  run({ name: "memory", makeStores: memoryStores, describe, test });
