/**
 * A read cache in each server process for what every request reads: API keys, partners with their
 * active signing secrets, products with their metrics, vault totals, holdings and prices. It is
 * coherent across instances: migration 0004's triggers announce each committed change on
 * `partner_yield_changes`, and the cache's own listening connection (change-listener.ts) drops the
 * rows named, within milliseconds of the commit, whoever wrote them.
 *
 * The cache is trusted only while that connection is subscribed and its last heartbeat is recent
 * (answered, and sent less than `heartbeatIntervalMs + heartbeatTimeoutMs` ago). Otherwise every
 * read goes to PostgreSQL as without a cache, nothing is stored, and the cache is emptied when the
 * connection is lost and again when it is back. A notification that arrives while a read-through
 * is in flight wins: the row read is not stored (cache-table.ts, generations).
 */
import type pg from "pg";
import { CacheTable, type CacheTrust } from "./cache-table.js";
import {
  ChangeListener,
  type ChangeListenerOptions,
  type ChangeSink,
  type TableChange,
} from "./change-listener.js";

export interface ReadCacheOptions {
  /**
   * How the listening connection connects; default the pool's own options (`pool.options`). Its
   * `application_name` is `applicationName`.
   */
  readonly connection?: pg.ClientConfig | undefined;
  /** The listening connection's name in `pg_stat_activity`. Default "partner-yield-listener". */
  readonly applicationName?: string | undefined;
  /** Default 1000 ms; see `ChangeListenerOptions`. */
  readonly heartbeatIntervalMs?: number | undefined;
  /** Default 2000 ms. */
  readonly heartbeatTimeoutMs?: number | undefined;
  /** First wait before reconnecting, doubled after each failure up to `reconnectMaxMs`. Default 100 ms. */
  readonly reconnectMinMs?: number | undefined;
  /** Default 5000 ms. */
  readonly reconnectMaxMs?: number | undefined;
  /** Most API keys held (found). Default 100,000. */
  readonly maxKeys?: number | undefined;
  /** Most partners held. Default 10,000. */
  readonly maxPartners?: number | undefined;
  /** Most products held, and most partners' product lists. Default 10,000 each. */
  readonly maxProducts?: number | undefined;
  /** Most vaults' totals held. Default 10,000. */
  readonly maxVaults?: number | undefined;
  /** Most wallets' holdings held. Default 100,000. */
  readonly maxHoldings?: number | undefined;
  /** Most prices held. Default 10,000. */
  readonly maxPrices?: number | undefined;
  /** Most answers of "no such row" held per kind (an unknown key hash, slug, wallet). Default 10,000. */
  readonly maxAbsent?: number | undefined;
  /** Called when the listening connection is subscribed or lost (for a log line). */
  readonly onStateChange?: ((state: ReadCacheState) => void) | undefined;
}

/** What `/readyz`-style reports and banners show of the cache. */
export interface ReadCacheState {
  /** Whether the cache answers now (subscribed, heartbeat recent). */
  readonly trusted: boolean;
  /** Whether the listening connection is subscribed. */
  readonly listening: boolean;
  /** Notifications applied since the cache started. */
  readonly changes: number;
  /** Times the listening connection was (re)subscribed. */
  readonly subscriptions: number;
  /** Why the connection was last lost, if it was. */
  readonly lastError: string | undefined;
  /** Entries held per kind (found and absent together). */
  readonly entries: Readonly<Record<string, number>>;
  /**
   * While listening: when the last answered heartbeat (or the subscription) was sent, in ms since
   * the epoch. Every change committed before it has been applied, so now minus this bounds how
   * late an invalidation can be (the notifications carry no commit time to measure it exactly).
   */
  readonly confirmedAtMs: number | undefined;
}

/** An API key's cached record with its row id (for `last_used_at`). */
export interface CachedKey<R> {
  readonly id: string;
  readonly record: R;
}

/** A vault's totals. */
export interface CachedVault {
  readonly totalAssets: bigint;
  readonly totalSupply: bigint;
}

/** A price with its observation time (ms since the epoch). */
export interface CachedPrice {
  readonly usdPriceWad: bigint;
  readonly updatedAtMs: number;
}

/** Joins the parts of a composite key (no part can hold U+0000: PostgreSQL text cannot). */
export function cacheKey(...parts: readonly (string | number)[]): string {
  return parts.join("\u0000");
}

/**
 * @example
 * const cache = new PostgresReadCache(pool);
 * cache.start();
 * const keys = new PostgresKeyStore(pool, undefined, cache);
 * // … on shutdown
 * await cache.close();
 */
export class PostgresReadCache implements ChangeSink {
  // `unknown` where the stores fill in their own record types (the core's).
  readonly keys: CacheTable<CachedKey<unknown>>;
  readonly partners: CacheTable<unknown>;
  readonly products: CacheTable<unknown>;
  readonly productLists: CacheTable<readonly unknown[]>;
  readonly vaults: CacheTable<CachedVault>;
  readonly holdings: CacheTable<bigint>;
  readonly prices: CacheTable<CachedPrice>;
  readonly #trust: CacheTrust = { until: 0 };
  readonly #tables: readonly CacheTable<unknown>[];
  readonly #listener: ChangeListener;
  readonly #leaseMs: number;
  readonly #onStateChange: ((state: ReadCacheState) => void) | undefined;
  #listening = false;
  #closing = false;
  #changes = 0;
  #subscriptions = 0;
  #lastError: string | undefined;

  constructor(pool: pg.Pool, options: ReadCacheOptions = {}) {
    const absent = options.maxAbsent ?? 10_000;
    const trust = this.#trust;
    this.keys = new CacheTable("keys", options.maxKeys ?? 100_000, absent, trust);
    this.partners = new CacheTable("partners", options.maxPartners ?? 10_000, absent, trust);
    this.products = new CacheTable("products", options.maxProducts ?? 10_000, absent, trust);
    this.productLists = new CacheTable("product_lists", options.maxProducts ?? 10_000, 0, trust);
    this.vaults = new CacheTable("vaults", options.maxVaults ?? 10_000, absent, trust);
    this.holdings = new CacheTable("holdings", options.maxHoldings ?? 100_000, absent, trust);
    this.prices = new CacheTable("prices", options.maxPrices ?? 10_000, absent, trust);
    this.#tables = [
      this.keys,
      this.partners,
      this.products,
      this.productLists,
      this.vaults,
      this.holdings,
      this.prices,
    ];
    const listenerOptions: ChangeListenerOptions = {
      connection: options.connection ?? clientConfigOf(pool),
      applicationName: options.applicationName,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      heartbeatTimeoutMs: options.heartbeatTimeoutMs,
      reconnectMinMs: options.reconnectMinMs,
      reconnectMaxMs: options.reconnectMaxMs,
    };
    this.#listener = new ChangeListener(listenerOptions, this);
    this.#leaseMs = this.#listener.heartbeatIntervalMs + this.#listener.heartbeatTimeoutMs;
    this.#onStateChange = options.onStateChange;
  }

  /** Opens the listening connection in the background; until it is subscribed, reads go through. */
  start(): void {
    this.#listener.start();
  }

  /** Closes the listening connection; the cache answers nothing afterwards. Idempotent. */
  close(): Promise<void> {
    this.#closing = true;
    return this.#listener.close();
  }

  state(): ReadCacheState {
    const entries: Record<string, number> = {};
    for (const table of this.#tables) entries[table.name] = table.size.found + table.size.absent;
    return {
      trusted: Date.now() < this.#trust.until,
      listening: this.#listening,
      changes: this.#changes,
      subscriptions: this.#subscriptions,
      lastError: this.#lastError,
      entries,
      confirmedAtMs: this.#listening ? this.#trust.until - this.#leaseMs : undefined,
    };
  }

  /** Lookups per table since the cache started: answered from it (hits) and read through (misses). */
  lookups(): Record<string, { hits: number; misses: number }> {
    const counts: Record<string, { hits: number; misses: number }> = {};
    for (const table of this.#tables) counts[table.name] = { hits: table.hits, misses: table.misses };
    return counts;
  }

  /** @internal ChangeSink: the cache starts empty, and is trusted for one lease. */
  subscribed(sentAt: number): void {
    this.#clear();
    this.#listening = true;
    this.#subscriptions++;
    this.#trust.until = sentAt + this.#leaseMs;
    this.#report();
  }

  /** @internal ChangeSink: a heartbeat went through; trusted for one more lease from when it was sent. */
  alive(sentAt: number): void {
    if (this.#listening) this.#trust.until = Math.max(this.#trust.until, sentAt + this.#leaseMs);
  }

  /** @internal ChangeSink. */
  lost(error: Error): void {
    const was = this.#listening;
    this.#listening = false;
    this.#trust.until = 0;
    this.#lastError = error.message;
    this.#clear();
    // Closing is no loss to report (a shutdown would log it as one).
    if (was && !this.#closing) this.#report();
  }

  /** @internal ChangeSink: drops what the change names. */
  changed(change: TableChange): void {
    this.#changes++;
    const { keys } = change;
    switch (change.table) {
      case "api_keys":
        this.#drop(this.keys, keys, 1);
        return;
      case "signing_secrets":
        // A partner's record holds its active secrets: the key is the partner's id.
        this.#drop(this.partners, keys, 1);
        return;
      case "partners":
        // Products name their partner by id only: a rename changes nothing they hold.
        this.#drop(this.partners, keys, 1);
        return;
      case "products":
        this.#drop(this.products, keys, 2);
        this.#drop(this.productLists, keys, 1);
        return;
      case "vaults":
        this.#drop(this.vaults, keys, 2);
        return;
      case "vault_holdings":
        this.#drop(this.holdings, keys, 3);
        return;
      case "asset_prices":
        this.#drop(this.prices, keys, 2);
        return;
      default:
        // A table this code does not cache, or a payload it could not read ("*"): when unsure, all.
        if (change.table === "*") this.#clear();
    }
  }

  /** Drops the rows named by their first `parts` key columns; all of them when not named. */
  #drop(table: CacheTable<unknown>, keys: readonly (readonly string[])[] | undefined, parts: number): void {
    if (keys === undefined || keys.some((key) => key.length < parts)) {
      table.clear();
      return;
    }
    for (const key of keys) table.invalidate(parts === 1 ? key[0]! : cacheKey(...key.slice(0, parts)));
  }

  /** Tells `onStateChange`; what it throws is dropped (it runs in the listener's event handlers). */
  #report(): void {
    try {
      this.#onStateChange?.(this.state());
    } catch {
      // A logging callback must not take the listener (or the process) down.
    }
  }

  #clear(): void {
    for (const table of this.#tables) table.clear();
  }
}

/** The connection settings of a pool, for a client of its own. */
function clientConfigOf(pool: pg.Pool): pg.ClientConfig {
  const {
    connectionString,
    host,
    port,
    user,
    password,
    database,
    ssl,
    options: startupOptions,
  } = pool.options as pg.ClientConfig;
  return { connectionString, host, port, user, password, database, ssl, options: startupOptions };
}
