/** The core's store conformance suites against PostgreSQL (one database for the file). */
import {
  runEventStoreSuite,
  runKeyStoreSuite,
  runPartnerStoreSuite,
  runProductSourceSuite,
  type StoreSeed,
} from "@partner-yield/core/testing";
import { createPostgresStores, importData, PostgresEventStore } from "../src/index.js";
import { gate, postgresReachable, testDatabase } from "./database.js";

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
