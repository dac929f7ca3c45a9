/**
 * @partner-yield/store-postgres — the core's stores on PostgreSQL: events with their idempotency
 * keys, API keys (hashes), partners, signing secrets, products with metrics, vault holdings and USD
 * prices; versioned migrations and an idempotent import of the fixture files.
 * @module
 */
export { RETRY_AFTER_SECONDS } from "./errors.js";
export { PostgresEventStore } from "./event-store.js";
export { type DataSet, dataSetOf, type ImportReport, importData, type TableChanges } from "./import.js";
export { PostgresKeyStore } from "./key-store.js";
export {
  assertSchemaCurrent,
  knownMigrations,
  type Migration,
  migrate,
  type SchemaStatus,
  SchemaVersionError,
  schemaStatus,
} from "./migrations.js";
export { PostgresPartnerStore } from "./partner-store.js";
export { createPool, type PostgresPoolOptions } from "./pool.js";
export { PostgresPositionSource, PostgresPriceSource, PostgresProductSource } from "./product-source.js";
export { countRows, listPartnerIds, type RowCounts } from "./status.js";
export { createPostgresStores, openPostgresStores, type PostgresStores } from "./stores.js";
