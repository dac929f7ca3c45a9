/**
 * The `PriceTable` conformance suite, written once and run against every table (in memory, the
 * JSON file, PostgreSQL, or a team's own feed), through `TablePriceSource` as the API uses it:
 * exact prices, a stale price refused with 503 and never served, a price refreshed in one write
 * served on the next request, and an unreachable backend answered 503, not with a remembered price.
 *
 * @example
 * import { describe, test } from "node:test"; // or vitest, or bun:test
 * runPriceTableSuite({ name: "my feed", makeTable: async () => ({ table, write, refresh, close }), describe, test });
 * @module
 */
import { type ProductRecord, StoreUnavailableError, toChecksumAddress } from "@partner-yield/core";
import {
  assertDeepEqual,
  assertEqual,
  assertTrue,
  type Closable,
  type SuiteOptions,
} from "@partner-yield/core/testing";
import type { PriceTable, PriceTableEntry } from "../price-table.js";
import { TablePriceSource } from "../table-price-source.js";

/** A table with the writes the suite needs, as its feed or its operator makes them. */
export interface PriceTableUnderTest extends Closable {
  readonly table: PriceTable;
  /** Writes rows as a feed does: each price with its own observation time (`updatedAtMs`). */
  write(rows: readonly PriceTableEntry[]): Promise<void>;
  /**
   * Sets one asset's price as an operator does: one write, dated by the backend's own clock
   * (PostgreSQL: one `UPDATE … SET usd_price = …, updated_at = now()`). `usdPrice` is a decimal.
   */
  refresh(chainId: number, assetAddress: string, usdPrice: string): Promise<void>;
}

export interface PriceTableSuiteOptions extends SuiteOptions {
  /** A table; several may share one backend (each test writes addresses of its own). */
  readonly makeTable: () => Promise<PriceTableUnderTest>;
  /**
   * Makes the backend unreachable (a database cut, a file gone); resolves to the function that
   * brings it back. Leave out for a table that cannot fail (in memory).
   */
  readonly cut?: (() => Promise<() => Promise<void>>) | undefined;
}

const BASE = 8453;
const HOUR_MS = 3_600_000;

/** A random address in EIP-55 form, as `ProductRecord` holds them. */
function randomAddress(): string {
  const bytes = new Uint8Array(20);
  crypto.getRandomValues(bytes);
  return toChecksumAddress(Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""));
}

/** The fields of a product that a price lookup reads. */
function productOf(chainId: number, assetAddress: string, assetSymbol = "TST"): ProductRecord {
  return { chainId, assetAddress, assetSymbol } as ProductRecord;
}

/** Now, in whole milliseconds a second ago (every backend keeps milliseconds). */
function recently(): number {
  return Date.now() - 1000;
}

async function rejectsUnavailable(
  promise: Promise<unknown>,
  message: string,
): Promise<StoreUnavailableError> {
  try {
    const value = await promise;
    throw new Error(`${message}: expected StoreUnavailableError, got ${String(value)}`);
  } catch (error) {
    assertTrue(
      error instanceof StoreUnavailableError,
      `${message}: expected StoreUnavailableError, got ${String(error)}`,
    );
    return error;
  }
}

async function withTable(
  options: PriceTableSuiteOptions,
  body: (under: PriceTableUnderTest) => Promise<void>,
): Promise<void> {
  const under = await options.makeTable();
  try {
    await body(under);
  } finally {
    await under.close();
  }
}

/**
 * Registers the suite with the runner's `describe` and `test`.
 * @example runPriceTableSuite({ name: "memory", makeTable, describe, test });
 */
export function runPriceTableSuite(options: PriceTableSuiteOptions): void {
  const { describe, test } = options;
  describe(`PriceTable conformance: ${options.name}`, () => {
    test("a price is read back exactly (18 fractional digits, its time to the millisecond), in any address case", () =>
      withTable(options, async ({ table, write }) => {
        const usdc = randomAddress();
        const btc = randomAddress();
        const dust = randomAddress();
        const at = recently();
        const rows: PriceTableEntry[] = [
          { chainId: BASE, assetAddress: usdc, usdPriceWad: 1_234_567_890_123_456_789_012n, updatedAtMs: at },
          {
            chainId: BASE,
            assetAddress: btc,
            usdPriceWad: 104_250_500_000_000_000_000_000n,
            updatedAtMs: at - 1,
          },
          { chainId: BASE, assetAddress: dust, usdPriceWad: 1n, updatedAtMs: at - 2 },
          // The same address on another chain is another asset.
          { chainId: 1, assetAddress: usdc, usdPriceWad: 2n * 10n ** 18n, updatedAtMs: at - 3 },
        ];
        await write(rows);
        for (const row of rows) {
          for (const address of [row.assetAddress, row.assetAddress.toLowerCase()])
            assertDeepEqual(
              await table.getPrice(row.chainId, address),
              { usdPriceWad: row.usdPriceWad, updatedAtMs: row.updatedAtMs },
              `the price of ${address} on chain ${row.chainId}`,
            );
        }
        assertEqual(await table.getPrice(BASE, randomAddress()), undefined, "an asset without a row");
        assertEqual(await table.getPrice(10, usdc), undefined, "a chain without a row for the asset");
        const prices = new TablePriceSource(table, { maxAgeSeconds: 3600 });
        assertEqual(await prices.getUsdPriceWad(productOf(BASE, usdc)), 1_234_567_890_123_456_789_012n);
        assertEqual(await prices.getUsdPriceWad(productOf(BASE, dust)), 1n);
      }));

    test("a price older than the maximum age is 503 with Retry-After, never the stale value; logged once", () =>
      withTable(options, async ({ table, write }) => {
        const stale = randomAddress();
        const ahead = randomAddress();
        await write([
          {
            chainId: BASE,
            assetAddress: stale,
            usdPriceWad: 10n ** 18n,
            updatedAtMs: Date.now() - 2 * HOUR_MS,
          },
          { chainId: BASE, assetAddress: ahead, usdPriceWad: 10n ** 18n, updatedAtMs: Date.now() + HOUR_MS },
        ]);
        const logged: string[] = [];
        const prices = new TablePriceSource(table, {
          maxAgeSeconds: 3600,
          retryAfterSeconds: 30,
          log: (line) => logged.push(line),
        });
        for (let i = 0; i < 3; i++) {
          const refused = await rejectsUnavailable(
            prices.getUsdPriceWad(productOf(BASE, stale, "STALE")),
            "a two-hour-old price",
          );
          assertEqual(refused.retryAfterSeconds, 30, "Retry-After of a stale price");
          assertTrue(
            /STALE on chain 8453 is \d+ s old \(at most 3600 s is served\)/.test(refused.message),
            `the reason names the asset and its age: ${refused.message}`,
          );
        }
        await rejectsUnavailable(
          prices.getUsdPriceWad(productOf(BASE, ahead)),
          "a price dated an hour ahead",
        );
        assertEqual(logged.length, 2, `one line per refused price, not per request: ${logged.join(" | ")}`);
        const [age] = await prices.ages([productOf(BASE, stale, "STALE")]);
        assertEqual(age?.status, "stale", "ages() of the stale price");
        assertTrue((age?.ageSeconds ?? 0) >= 7200, `its age in seconds: ${age?.ageSeconds}`);
      }));

    test("a stale price refreshed in one write is served on the next request", () =>
      withTable(options, async ({ table, write, refresh }) => {
        const asset = randomAddress();
        await write([
          {
            chainId: BASE,
            assetAddress: asset,
            usdPriceWad: 10n ** 18n,
            updatedAtMs: Date.now() - 2 * HOUR_MS,
          },
        ]);
        const logged: string[] = [];
        const prices = new TablePriceSource(table, { maxAgeSeconds: 3600, log: (l) => logged.push(l) });
        const product = productOf(BASE, asset, "USDC");
        await rejectsUnavailable(prices.getUsdPriceWad(product), "before the refresh");
        await refresh(BASE, asset.toLowerCase(), "1.0002");
        assertEqual(await prices.getUsdPriceWad(product), 1_000_200_000_000_000_000n, "after the refresh");
        const [age] = await prices.ages([product]);
        assertEqual(age?.status, "fresh", "ages() after the refresh");
        assertTrue((age?.ageSeconds ?? Infinity) < 600, `dated by the write: ${age?.ageSeconds} s old`);
        assertTrue(
          logged.some((line) => /USDC on chain 8453 is served again/.test(line)),
          `the recovery is logged: ${logged.join(" | ")}`,
        );
      }));

    test("ages(): each asset once, its age and status; missing without a row", () =>
      withTable(options, async ({ table, write }) => {
        const fresh = randomAddress();
        const missing = randomAddress();
        await write([
          { chainId: BASE, assetAddress: fresh, usdPriceWad: 10n ** 18n, updatedAtMs: recently() },
        ]);
        const prices = new TablePriceSource(table, { maxAgeSeconds: 3600 });
        const ages = await prices.ages([
          productOf(BASE, fresh, "A"),
          productOf(BASE, fresh.toLowerCase(), "A"),
          productOf(BASE, missing, "B"),
        ]);
        assertDeepEqual(
          ages.map((a) => [a.assetSymbol, a.status]),
          [
            ["A", "fresh"],
            ["B", "missing"],
          ],
        );
      }));

    const cut = options.cut;
    if (cut !== undefined)
      test("the backend cut: 503 for every lookup, never a remembered price; back: served again", () =>
        withTable(options, async ({ table, write }) => {
          const asset = randomAddress();
          await write([
            { chainId: BASE, assetAddress: asset, usdPriceWad: 10n ** 18n, updatedAtMs: recently() },
          ]);
          const prices = new TablePriceSource(table, { maxAgeSeconds: 3600 });
          const product = productOf(BASE, asset);
          assertEqual(await prices.getUsdPriceWad(product), 10n ** 18n, "before the cut");
          const restore = await cut();
          try {
            await rejectsUnavailable(table.getPrice(BASE, asset), "getPrice while cut");
            const refused = await rejectsUnavailable(
              prices.getUsdPriceWad(product),
              "a position's price while cut",
            );
            assertTrue(refused.retryAfterSeconds > 0, "with a Retry-After");
          } finally {
            await restore();
          }
          assertEqual(await prices.getUsdPriceWad(product), 10n ** 18n, "after the backend is back");
        }));
  });
}
