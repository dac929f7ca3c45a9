/**
 * Every PostgreSQL-backed port of the core over one pool, ready to spread into
 * `createPartnerApi({ environment, ...stores })`.
 */
import type pg from "pg";
import { guarded } from "./errors.js";
import { PostgresEventStore } from "./event-store.js";
import { PostgresKeyStore } from "./key-store.js";
import { assertSchemaCurrent } from "./migrations.js";
import { PostgresPartnerStore } from "./partner-store.js";
import { createPool, type PostgresPoolOptions } from "./pool.js";
import { PostgresPositionSource, PostgresPriceSource, PostgresProductSource } from "./product-source.js";

export interface PostgresStores {
  readonly events: PostgresEventStore;
  readonly keys: PostgresKeyStore;
  readonly partners: PostgresPartnerStore;
  readonly products: PostgresProductSource;
  readonly positions: PostgresPositionSource;
  readonly prices: PostgresPriceSource;
  readonly pool: pg.Pool;
  /** Resolves when the database answers; throws `StoreUnavailableError` otherwise. */
  ping(): Promise<void>;
  /** Ends the pool when these stores opened it (idempotent); a pool passed in is left open. */
  close(): Promise<void>;
}

/**
 * The stores over `pool` (yours to end) or over a new pool built from options (ended by `close()`,
 * which any of the stores calls: the API closes them all on shutdown).
 * @example
 * const stores = await openPostgresStores({ connectionString: process.env.DATABASE_URL! });
 * const api = createPartnerApi({ environment: "production", ...stores, rateLimiter });
 */
export function createPostgresStores(source: pg.Pool | PostgresPoolOptions): PostgresStores {
  const owned = !("query" in source);
  const pool = owned ? createPool(source) : source;
  let ending: Promise<void> | undefined;
  const close = (): Promise<void> => {
    if (!owned) return Promise.resolve();
    ending ??= pool.end();
    return ending;
  };
  return {
    events: new PostgresEventStore(pool, close),
    keys: new PostgresKeyStore(pool, close),
    partners: new PostgresPartnerStore(pool, close),
    products: new PostgresProductSource(pool),
    positions: new PostgresPositionSource(pool),
    prices: new PostgresPriceSource(pool),
    pool,
    ping: async () => {
      await guarded("ping", () => pool.query("select 1"));
    },
    close,
  };
}

/**
 * `createPostgresStores`, after checking that the database holds the schema this code knows.
 * @throws SchemaVersionError when migrations are pending or the schema is newer than this code.
 * @throws StoreUnavailableError when the database cannot be reached.
 */
export async function openPostgresStores(source: pg.Pool | PostgresPoolOptions): Promise<PostgresStores> {
  const stores = createPostgresStores(source);
  try {
    await assertSchemaCurrent(stores.pool);
  } catch (error) {
    await stores.close();
    throw error;
  }
  return stores;
}
