/**
 * A table of USD prices with the time each was last updated: the storage port of
 * `TablePriceSource`. A team backs it with its own feed (a PostgreSQL table, a cache, an oracle
 * poller); `MemoryPriceTable` holds rows in memory, e.g. parsed from a JSON file.
 * @module
 */
import { parseAddress } from "@partner-yield/core";
import { parseDecimal, RATE_DECIMALS } from "@partner-yield/core/math";

/** One price. */
export interface PriceRow {
  /** USD per whole unit of the asset, scaled by 10^18. */
  readonly usdPriceWad: bigint;
  /** When the price was observed, in milliseconds since the Unix epoch. */
  readonly updatedAtMs: number;
}

/** The port: one lookup per position answer. */
export interface PriceTable {
  /**
   * The row for an asset (any address case), or undefined when the table has none.
   * @throws StoreUnavailableError when the table cannot be read.
   */
  getPrice(chainId: number, assetAddress: string): Promise<PriceRow | undefined>;
}

/** A row as written in a JSON price file. */
export interface PriceTableEntry extends PriceRow {
  readonly chainId: number;
  readonly assetAddress: string;
}

/** A price file that does not validate; `field` is a JSON pointer into it. */
export class PriceTableError extends Error {
  override readonly name = "PriceTableError";
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field === "" ? "(root)" : field}: ${reason}`);
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const PRICE = /^(0|[1-9][0-9]*)(\.[0-9]{1,18})?$/;

/**
 * Validates the rows of a JSON price file:
 * `[{ "chain_id": 8453, "asset_address": "0x…", "usd_price": "0.9998", "updated_at": "2026-11-20T10:00:00Z" }]`.
 * @throws PriceTableError naming the row and field.
 * @example parsePriceTable(JSON.parse(readFileSync("prices.json", "utf8")));
 */
export function parsePriceTable(json: unknown): PriceTableEntry[] {
  if (!Array.isArray(json)) throw new PriceTableError("", "must be an array of price rows");
  return json.map((row: unknown, i): PriceTableEntry => {
    const at = (field: string) => `/${i}/${field}`;
    if (typeof row !== "object" || row === null || Array.isArray(row))
      throw new PriceTableError(`/${i}`, "must be an object");
    const r = row as Record<string, unknown>;
    for (const key of Object.keys(r))
      if (!["chain_id", "asset_address", "usd_price", "updated_at"].includes(key))
        throw new PriceTableError(at(key), "unknown field");
    if (typeof r["chain_id"] !== "number" || !Number.isSafeInteger(r["chain_id"]) || r["chain_id"] <= 0)
      throw new PriceTableError(at("chain_id"), "must be a positive integer");
    const address = typeof r["asset_address"] === "string" ? parseAddress(r["asset_address"]) : undefined;
    if (address === undefined || !address.ok)
      throw new PriceTableError(at("asset_address"), address?.reason ?? "must be a 0x address string");
    const price = r["usd_price"];
    const usdPrice =
      typeof price === "string" && PRICE.test(price) ? parseDecimal(price, RATE_DECIMALS) : undefined;
    if (usdPrice === undefined || !usdPrice.ok)
      throw new PriceTableError(
        at("usd_price"),
        "must be a decimal string with at most 18 fractional digits",
      );
    const updated = r["updated_at"];
    const updatedAtMs =
      typeof updated === "string" && RFC3339.test(updated) ? Date.parse(updated) : Number.NaN;
    if (Number.isNaN(updatedAtMs))
      throw new PriceTableError(at("updated_at"), "must be an RFC 3339 date-time with an offset");
    return {
      chainId: r["chain_id"],
      assetAddress: address.value,
      usdPriceWad: usdPrice.value,
      updatedAtMs,
    };
  });
}

/**
 * @example
 * const table = new MemoryPriceTable([{ chainId: 8453, assetAddress: usdc, usdPriceWad: 10n ** 18n, updatedAtMs: Date.now() }]);
 * table.set({ ...row, updatedAtMs: Date.now() }); // a feed refreshing it
 */
export class MemoryPriceTable implements PriceTable {
  readonly #rows = new Map<string, PriceRow>();

  constructor(rows: Iterable<PriceTableEntry> = []) {
    for (const row of rows) this.set(row);
  }

  set(row: PriceTableEntry): void {
    this.#rows.set(priceKey(row.chainId, row.assetAddress), {
      usdPriceWad: row.usdPriceWad,
      updatedAtMs: row.updatedAtMs,
    });
  }

  getPrice(chainId: number, assetAddress: string): Promise<PriceRow | undefined> {
    return Promise.resolve(this.#rows.get(priceKey(chainId, assetAddress)));
  }
}

function priceKey(chainId: number, address: string): string {
  return `${chainId}:${address.toLowerCase()}`;
}
