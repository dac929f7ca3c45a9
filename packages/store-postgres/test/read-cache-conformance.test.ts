/**
 * The core's key, partner and product-source conformance suites against the stores with a read
 * cache: each lookup is asked twice, and the second answer (the cache's, on a hit) must equal the
 * first (the database's), so a cached record is exactly what PostgreSQL holds.
 */
import assert from "node:assert/strict";
import type { DataStores, StoreSeed } from "@partner-yield/core/testing";
import { runKeyStoreSuite, runPartnerStoreSuite, runProductSourceSuite } from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { importData } from "../src/index.js";
import { cachedStores, eventually, trusted } from "./read-cache-support.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("cache_conformance") : undefined;

/** `read` twice; the second answer must equal the first. */
async function twice<T>(read: () => T | PromiseLike<T>): Promise<T> {
  const first = await read();
  const second = await read();
  assert.deepEqual(second, first, "the cached answer equals the database's");
  return second;
}

const stores = async (seed: StoreSeed): Promise<DataStores> => {
  await importData(db!.pool, seed);
  const s = cachedStores(db!.pool, "py-cache-conformance");
  await eventually("the cache subscribed", () => trusted(s));
  return {
    keys: { findByHash: (hash) => twice(() => s.keys.findByHash(hash)), close: s.close },
    partners: { getPartner: (id) => twice(() => s.partners.getPartner(id)), close: s.close },
    products: {
      listProducts: (partnerId) => twice(() => s.products.listProducts(partnerId)),
      getProduct: (partnerId, slug) => twice(() => s.products.getProduct(partnerId, slug)),
    },
    positions: { getHolding: (product, wallet) => twice(() => s.positions.getHolding(product, wallet)) },
    prices: { getUsdPriceWad: (product) => twice(() => s.prices.getUsdPriceWad(product)) },
    close: s.close,
  };
};

for (const run of [runKeyStoreSuite, runPartnerStoreSuite, runProductSourceSuite])
  run({ name: "postgres with a read cache", makeStores: stores, describe, test });
