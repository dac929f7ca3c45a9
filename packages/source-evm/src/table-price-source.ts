/**
 * `PriceSource` over a `PriceTable` that knows how old each price is. A price older than
 * `maxAgeSeconds` is not served: the position answer is 503 service_unavailable with Retry-After
 * (StoreUnavailableError), never a stale value presented as current. A price dated in the future
 * beyond the allowed clock skew is refused the same way (a broken feed, not a fresh price).
 * @module
 */
import { type PriceSource, type ProductRecord, StoreUnavailableError } from "@partner-yield/core";
import type { PriceTable } from "./price-table.js";

export interface TablePriceSourceOptions {
  /** Oldest price served, in seconds; required (there is no safe default for every asset). */
  readonly maxAgeSeconds: number;
  /** Tolerated clock difference with the feed for prices dated ahead; default 60 s. */
  readonly clockSkewSeconds?: number | undefined;
  /** Retry-After of the 503 for a stale price; default 30 s. */
  readonly retryAfterSeconds?: number | undefined;
  /** Clock in milliseconds; default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** Called with a line whenever a price is refused as stale or dated ahead; default: none. */
  readonly log?: ((line: string) => void) | undefined;
}

/** How old one asset's price is (for logs, banners and readiness reports). */
export interface PriceAge {
  readonly chainId: number;
  readonly assetAddress: string;
  readonly assetSymbol: string;
  /** Undefined when the table has no row for the asset. */
  readonly ageSeconds: number | undefined;
  readonly status: "fresh" | "stale" | "ahead" | "missing";
}

/**
 * @example
 * const prices = new TablePriceSource(new MemoryPriceTable(rows), { maxAgeSeconds: 3600 });
 * createPartnerApi({ …, prices });
 */
export class TablePriceSource implements PriceSource {
  readonly #table: PriceTable;
  readonly maxAgeSeconds: number;
  readonly #skewMs: number;
  readonly #retryAfter: number;
  readonly #now: () => number;
  readonly #log: (line: string) => void;

  constructor(table: PriceTable, options: TablePriceSourceOptions) {
    if (!Number.isSafeInteger(options.maxAgeSeconds) || options.maxAgeSeconds < 1)
      throw new RangeError(`maxAgeSeconds must be a positive integer, got ${String(options.maxAgeSeconds)}`);
    this.#table = table;
    this.maxAgeSeconds = options.maxAgeSeconds;
    this.#skewMs = (options.clockSkewSeconds ?? 60) * 1000;
    this.#retryAfter = options.retryAfterSeconds ?? 30;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? (() => {});
  }

  async getUsdPriceWad(product: ProductRecord): Promise<bigint | undefined> {
    const row = await this.#table.getPrice(product.chainId, product.assetAddress);
    if (row === undefined) return undefined;
    const age = this.#classify(row.updatedAtMs);
    if (age.status === "fresh") return row.usdPriceWad;
    const what = `the USD price of ${product.assetSymbol} on chain ${product.chainId}`;
    const reason =
      age.status === "stale"
        ? `${what} is ${age.ageSeconds} s old (at most ${this.maxAgeSeconds} s is served)`
        : `${what} is dated ${-age.ageSeconds} s in the future`;
    this.#log(reason);
    throw new StoreUnavailableError(reason, this.#retryAfter);
  }

  /** The age of each product's price, for a start-up banner or a readiness report. */
  async ages(products: Iterable<ProductRecord>): Promise<PriceAge[]> {
    const seen = new Map<string, PriceAge>();
    for (const product of products) {
      const key = `${product.chainId}:${product.assetAddress.toLowerCase()}`;
      if (seen.has(key)) continue;
      const row = await this.#table.getPrice(product.chainId, product.assetAddress);
      const base = {
        chainId: product.chainId,
        assetAddress: product.assetAddress,
        assetSymbol: product.assetSymbol,
      };
      seen.set(
        key,
        row === undefined
          ? { ...base, ageSeconds: undefined, status: "missing" }
          : { ...base, ...this.#classify(row.updatedAtMs) },
      );
    }
    return [...seen.values()];
  }

  #classify(updatedAtMs: number): { ageSeconds: number; status: "fresh" | "stale" | "ahead" } {
    const ageMs = this.#now() - updatedAtMs;
    const ageSeconds = Math.floor(ageMs / 1000);
    if (ageMs < -this.#skewMs) return { ageSeconds, status: "ahead" };
    if (ageMs > this.maxAgeSeconds * 1000) return { ageSeconds, status: "stale" };
    return { ageSeconds: Math.max(0, ageSeconds), status: "fresh" };
  }
}
