/** The core's store conformance suites against PostgreSQL (one database for the file). */
import {
  runEventStoreSuite,
  runKeyStoreSuite,
  runPartnerAdminSuite,
  runPartnerStoreSuite,
  runProductSourceSuite,
  type StoreSeed,
} from "@partner-yield/core/testing";
import { gate } from "@partner-yield/node-adapter/testing";
import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import { createPostgresStores, importData, PostgresEventStore, PostgresPartnerAdmin } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("conformance") : undefined;

runEventStoreSuite({
  name: "postgres",
  makeStore: async () => new PostgresEventStore(db!.pool),
  describe,
  test,
});

const postgresStores = async (seed: StoreSeed) => {
  await importData(db!.pool, seed);
  // Over the file's pool, which the stores leave open.
  return createPostgresStores(db!.pool);
};
for (const run of [runKeyStoreSuite, runPartnerStoreSuite, runProductSourceSuite])
  run({ name: "postgres", makeStores: postgresStores, describe, test });

// The admin and the read ports the API uses, over the file's pool: a change must be seen by the next lookup.
runPartnerAdminSuite({
  name: "postgres",
  makeAdmin: async () => {
    const stores = createPostgresStores(db!.pool);
    return {
      admin: new PostgresPartnerAdmin(db!.pool),
      keys: stores.keys,
      partners: stores.partners,
      close: stores.close,
    };
  },
  describe,
  test,
});
