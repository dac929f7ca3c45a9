/**
 * @partner-yield/store-postgres/testing — a PostgreSQL database of its own for each test file
 * (created, migrated, dropped after the file's tests), for this package's tests, the server's, and
 * a team's own tests on these stores. Built on node:test (`after`) and `pg`; the superuser
 * connection is `PARTNER_YIELD_TEST_DATABASE_URL` (default postgres@127.0.0.1:5432).
 * @example
 * import { postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
 * if ((await postgresReachable()) === undefined) {
 *   const { pool } = await testDatabase("mine"); // dropped after this file's tests
 * }
 * @module
 */
export {
  ADMIN_URL,
  databaseUrl,
  dropDatabase,
  postgresReachable,
  type TestDatabase,
  testDatabase,
} from "./database.js";
