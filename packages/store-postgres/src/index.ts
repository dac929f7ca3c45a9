/**
 * @partner-yield/store-postgres — the core's stores on PostgreSQL: events with their idempotency
 * keys, API keys (hashes), partners, signing secrets, products with metrics, vault holdings and USD
 * prices; versioned migrations and an idempotent import of the fixture files; an optional read
 * cache in each process, kept current by LISTEN/NOTIFY.
 * @module
 */
export { type AuditEntry, type AuditRow, listAudit, recordAudit } from "./admin-audit.js";
export { RETRY_AFTER_SECONDS } from "./errors.js";
export {
  EVENTS_CHANNEL,
  IDEMPOTENCY_WINDOW_DAYS,
  type LogPosition,
  lastEventId,
  PostgresEventConsumers,
  type PostgresEventConsumersOptions,
  type PruneReport,
  pruneEvents,
  readLog,
  tailStart,
} from "./event-consumer.js";
export { PostgresEventStore } from "./event-store.js";
export {
  type DataSet,
  dataSetOf,
  type ImportOptions,
  type ImportOutcome,
  type ImportReport,
  importData,
  importDataSet,
  type TableChanges,
} from "./import.js";
export { PostgresKeyStore } from "./key-store.js";
export {
  assertSchemaCurrent,
  knownMigrations,
  type Migration,
  migrate,
  type NewerMigration,
  parseMigration,
  type SchemaOptions,
  type SchemaStatus,
  SchemaVersionError,
  schemaStatus,
} from "./migrations.js";
export { PostgresPartnerAdmin, type PostgresPartnerAdminOptions } from "./partner-admin.js";
export { PostgresPartnerStore } from "./partner-store.js";
export { createPool, type PostgresPoolOptions } from "./pool.js";
export { type PostgresPriceRow, PostgresPriceTable } from "./price-table.js";
export { PostgresPositionSource, PostgresPriceSource, PostgresProductSource } from "./product-source.js";
export { PostgresReadCache, type ReadCacheOptions, type ReadCacheState } from "./read-cache.js";
export {
  checkSecretKeys,
  openSecret,
  type RekeyReport,
  rekeySecrets,
  SECRET_KEY_VARIABLE,
  SECRET_KEYS_VARIABLE,
  type SecretColumns,
  type SecretForms,
  SecretKeyError,
  SecretKeyring,
  secretColumns,
  secretForms,
  secretSha256,
} from "./secret-keys.js";
export { countRows, listPartnerIds, type RowCounts } from "./status.js";
export {
  createPostgresStores,
  openPostgresStores,
  type PostgresStores,
  type PostgresStoresOptions,
} from "./stores.js";
