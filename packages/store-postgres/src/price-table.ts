/**
 * USD prices with the time each was observed, from the `asset_prices` table: the `PriceTable` port
 * of `@partner-yield/source-evm` (`getPrice(chainId, assetAddress) → { usdPriceWad, updatedAtMs }`),
 * which `TablePriceSource` ages. One SELECT per lookup, or with a read cache (read-cache.ts) none on
 * a hit, so a price written with one SQL statement is served (or refused as stale) by every
 * instance on the next request (with a cache, the next after the change's notification arrives):
 *
 *   UPDATE asset_prices SET usd_price = 1.0002, updated_at = now()
 *   WHERE chain_id = 8453 AND asset_address = lower('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
 *
 * (`updated_at` may be the feed's own observation time; left out of a statement that changes the
 * price, it is stamped now(): migration 0002.)
 * @module
 */
import type pg from "pg";
import { guarded } from "./errors.js";
import { type CachedPrice, cacheKey, type PostgresReadCache } from "./read-cache.js";

/** One price: USD per whole unit scaled by 10^18, and when it was observed (ms since the epoch). */
export interface PostgresPriceRow {
  readonly usdPriceWad: bigint;
  readonly updatedAtMs: number;
}

// The column has 18 fractional digits: the scaled value is an exact integer. The time leaves as
// whole milliseconds (the column holds microseconds; a price's age is counted in seconds).
const SELECT_PRICE = `select (usd_price * 1000000000000000000)::numeric(78, 0)::text as wad,
  floor(extract(epoch from updated_at) * 1000)::bigint::text as updated_at_ms
from asset_prices where chain_id = $1 and asset_address = $2`;

/**
 * @example
 * import { TablePriceSource } from "@partner-yield/source-evm";
 * const prices = new TablePriceSource(new PostgresPriceTable(pool), { maxAgeSeconds: 3600 });
 */
export class PostgresPriceTable {
  readonly #pool: pg.Pool;
  readonly #cache: PostgresReadCache | undefined;

  constructor(pool: pg.Pool, cache?: PostgresReadCache | undefined) {
    this.#pool = pool;
    this.#cache = cache;
  }

  /** The cached price (null: known to have no row), or undefined when the database must be asked. */
  cachedPrice(chainId: number, assetAddress: string): CachedPrice | null | undefined {
    return this.#cache?.prices.get(cacheKey(chainId, assetAddress.toLowerCase()));
  }

  /**
   * The price of an asset (any address case), or undefined when the table has none.
   * @throws StoreUnavailableError when the database cannot be read (503 with Retry-After).
   */
  async getPrice(chainId: number, assetAddress: string): Promise<PostgresPriceRow | undefined> {
    const address = assetAddress.toLowerCase();
    const table = this.#cache?.prices;
    if (table === undefined) return this.#query(chainId, address);
    const key = cacheKey(chainId, address);
    const hit = table.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const generation = table.generation;
    const price = await this.#query(chainId, address);
    table.fill(key, price ?? null, generation);
    return price;
  }

  async #query(chainId: number, address: string): Promise<PostgresPriceRow | undefined> {
    const result = await guarded("reading a price", () =>
      this.#pool.query<{ wad: string; updated_at_ms: string }>(SELECT_PRICE, [chainId, address]),
    );
    const row = result.rows[0];
    return row === undefined
      ? undefined
      : { usdPriceWad: BigInt(row.wad), updatedAtMs: Number(row.updated_at_ms) };
  }

  /**
   * Resolves when the table can be read (a readiness check: the database answers and the table is
   * there); throws `StoreUnavailableError` otherwise.
   */
  async ping(): Promise<void> {
    await guarded("reading the price table", () => this.#pool.query("select 1 from asset_prices limit 1"));
  }
}
