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
import { PostgresReadCache, type ReadCacheOptions } from "./read-cache.js";
import { checkSecretKeys, SECRET_KEYS_VARIABLE, SecretKeyError, type SecretKeyring } from "./secret-keys.js";

export interface PostgresStores {
  readonly events: PostgresEventStore;
  readonly keys: PostgresKeyStore;
  readonly partners: PostgresPartnerStore;
  readonly products: PostgresProductSource;
  readonly positions: PostgresPositionSource;
  readonly prices: PostgresPriceSource;
  readonly pool: pg.Pool;
  /** The read cache the stores share, when `readCache` asked for one. */
  readonly readCache: PostgresReadCache | undefined;
  /** What the operator should know (signing secrets stored in plain text while a key is set). */
  readonly warnings: readonly string[];
  /** Resolves when the database answers; throws `StoreUnavailableError` otherwise. */
  ping(): Promise<void>;
  /**
   * Closes the read cache's listening connection, and ends the pool when these stores opened it
   * (idempotent); a pool passed in is left open.
   */
  close(): Promise<void>;
}

export interface PostgresStoresOptions {
  /**
   * A read cache in this process for keys, partners and secrets, products and metrics, holdings
   * and prices, kept current by LISTEN/NOTIFY (read-cache.ts; the schema must be version 4 or
   * later): `true` or its options to use one, default none (every read a statement).
   */
  readonly readCache?: boolean | ReadCacheOptions | undefined;
  /**
   * The keys that open the signing secrets sealed in the database (`SecretKeyring.fromEnv`);
   * undefined: none (secrets must be plain). `openPostgresStores` refuses a database holding
   * secrets sealed under a key not given.
   */
  readonly secretKeys?: SecretKeyring | undefined;
  /** Refuse to open without `secretKeys` (a production server). Default false. */
  readonly requireSecretKeys?: boolean | undefined;
}

/**
 * The stores over `pool` (yours to end) or over a new pool built from options (ended by `close()`,
 * which any of the stores calls: the API closes them all on shutdown). With `readCache`, the
 * stores share one read cache, whose listening connection `close()` closes.
 * @example
 * const stores = await openPostgresStores({ connectionString: process.env.DATABASE_URL! }, { readCache: true });
 * const api = createPartnerApi({ environment: "production", ...stores, rateLimiter });
 */
export function createPostgresStores(
  source: pg.Pool | PostgresPoolOptions,
  options: PostgresStoresOptions = {},
): PostgresStores {
  const owned = !("query" in source);
  const pool = owned ? createPool(source) : source;
  const readCache =
    options.readCache === undefined || options.readCache === false
      ? undefined
      : new PostgresReadCache(pool, options.readCache === true ? {} : options.readCache);
  readCache?.start();
  let ending: Promise<void> | undefined;
  const close = (): Promise<void> => {
    ending ??= (async () => {
      await readCache?.close();
      if (owned) await pool.end();
    })();
    return ending;
  };
  return {
    events: new PostgresEventStore(pool, close),
    keys: new PostgresKeyStore(pool, close, readCache),
    partners: new PostgresPartnerStore(pool, close, readCache, options.secretKeys),
    products: new PostgresProductSource(pool, readCache),
    positions: new PostgresPositionSource(pool, readCache),
    prices: new PostgresPriceSource(pool, readCache),
    pool,
    readCache,
    warnings: [],
    ping: async () => {
      await guarded("ping", () => pool.query("select 1"));
    },
    close,
  };
}

/**
 * `createPostgresStores`, after checking that the database holds the schema this code knows and
 * that every sealed signing secret's key is given.
 * @throws SecretKeyError when `requireSecretKeys` and no keys, or a sealed secret's key is missing.
 * @throws SchemaVersionError when migrations are pending or the schema is newer than this code.
 * @throws StoreUnavailableError when the database cannot be reached.
 */
export async function openPostgresStores(
  source: pg.Pool | PostgresPoolOptions,
  options: PostgresStoresOptions = {},
): Promise<PostgresStores> {
  if (options.requireSecretKeys === true && options.secretKeys === undefined)
    throw new SecretKeyError(
      `no key to encrypt the signing secrets at rest: set ${SECRET_KEYS_VARIABLE} (one or more ID:BASE64 ` +
        '32-byte keys, e.g. `main:$(openssl rand -base64 32)`; docs/data.md, "Signing secrets at rest")',
    );
  const stores = createPostgresStores(source, options);
  try {
    await assertSchemaCurrent(stores.pool);
    const warning = await checkSecretKeys(stores.pool, options.secretKeys);
    return warning === undefined ? stores : { ...stores, warnings: [warning] };
  } catch (error) {
    await stores.close();
    throw error;
  }
}
