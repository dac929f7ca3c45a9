/**
 * `PostgresPriceTable` through source-evm's `PriceTable` conformance suite (exact prices, stale →
 * 503, one SQL statement → served on the next request, the database cut → 503), and what
 * migration 0002 and the fixture import do to a price's `updated_at`.
 */
import assert from "node:assert/strict";
import { after } from "node:test";
import type { ProductRecord } from "@partner-yield/core";
import { formatUnits, RATE_DECIMALS } from "@partner-yield/core/math";
import { gate } from "@partner-yield/node-adapter/testing";
import { type PriceTable, TablePriceSource } from "@partner-yield/source-evm";
import { runPriceTableSuite } from "@partner-yield/source-evm/testing";
import { ADMIN_URL, postgresReachable, testDatabase } from "@partner-yield/store-postgres/testing";
import pg from "pg";
import { createPool, importData, PostgresPriceTable } from "../src/index.js";

const { describe, test, available } = gate({ PostgreSQL: await postgresReachable() });
const db = available ? await testDatabase("prices", { prefix: "py_evm2_" }) : undefined;
// The pool a server reads prices through, with the default timeouts of `createPool`.
const serving = db === undefined ? undefined : createPool({ connectionString: db.url });
after(() => serving?.end());

/** Statements on the maintenance database (the test database cannot cut itself off). */
async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

runPriceTableSuite({
  name: "PostgresPriceTable",
  makeTable: async () => ({
    table: new PostgresPriceTable(serving!),
    // A feed's write: the price and its own observation time.
    write: async (rows) => {
      for (const row of rows)
        await db!.pool.query(
          `insert into asset_prices (chain_id, asset_address, usd_price, updated_at) values ($1, $2, $3, $4)
           on conflict (chain_id, asset_address)
           do update set usd_price = excluded.usd_price, updated_at = excluded.updated_at`,
          [
            row.chainId,
            row.assetAddress.toLowerCase(),
            formatUnits(row.usdPriceWad, RATE_DECIMALS),
            new Date(row.updatedAtMs).toISOString(),
          ],
        );
    },
    // The operator's one statement (packages/store-postgres/README.md).
    refresh: async (chainId, assetAddress, usdPrice) => {
      const updated = await db!.pool.query(
        "update asset_prices set usd_price = $3, updated_at = now() where chain_id = $1 and asset_address = lower($2)",
        [chainId, assetAddress, usdPrice],
      );
      assert.equal(updated.rowCount, 1);
    },
    close: async () => {},
  }),
  // The database refuses connections and drops those open: what a server sees when it goes down.
  cut: async () => {
    await admin(`alter database ${db!.name} with allow_connections false`);
    await admin(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${db!.name}' and pid <> pg_backend_pid()`,
    );
    return () => admin(`alter database ${db!.name} with allow_connections true`);
  },
  describe,
  test,
});

const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const product = { chainId: 8453, assetAddress: USDC, assetSymbol: "USDC" } as ProductRecord;

describe("a price's updated_at (migration 0002) and the fixture import", () => {
  const table: PriceTable = available ? new PostgresPriceTable(serving!) : (undefined as never);
  const prices = () => new TablePriceSource(table, { maxAgeSeconds: 3600 });
  const dateBack = () =>
    db!.pool.query(
      "update asset_prices set updated_at = now() - interval '2 hours' where chain_id = 8453 and asset_address = lower($1)",
      [USDC],
    );
  const importPrice = (usdPriceWad: bigint) =>
    importData(
      db!.pool,
      {
        partners: [],
        keys: [],
        products: [],
        vaults: [],
        prices: [{ chainId: 8453, assetAddress: USDC, usdPriceWad }],
      },
      { overwrite: true },
    );

  test("an imported price is dated at the import; re-importing it unchanged keeps that date", async () => {
    const first = await importPrice(999_800_000_000_000_000n);
    assert.deepEqual(first.asset_prices, { inserted: 1, updated: 0, kept: 0, unchanged: 0 });
    assert.equal(await prices().getUsdPriceWad(product), 999_800_000_000_000_000n);
    await dateBack();
    const again = await importPrice(999_800_000_000_000_000n);
    assert.deepEqual(again.asset_prices, { inserted: 0, updated: 0, kept: 0, unchanged: 1 });
    await assert.rejects(prices().getUsdPriceWad(product), /USDC on chain 8453 is \d+ s old/);
    const changed = await importPrice(1_000_100_000_000_000_000n);
    assert.deepEqual(changed.asset_prices, { inserted: 0, updated: 1, kept: 0, unchanged: 0 });
    assert.equal(await prices().getUsdPriceWad(product), 1_000_100_000_000_000_000n);
  });

  test("a changed price is stamped now(); a time that is set is kept; the same price and time again change nothing", async () => {
    await importPrice(10n ** 18n);
    await dateBack();
    await assert.rejects(prices().getUsdPriceWad(product), /is \d+ s old/, "dated back: kept, not stamped");
    await db!.pool.query(
      "update asset_prices set usd_price = usd_price, updated_at = updated_at where chain_id = 8453 and asset_address = lower($1)",
      [USDC],
    );
    await assert.rejects(prices().getUsdPriceWad(product), /is \d+ s old/, "a re-sent observation stays old");
    await db!.pool.query(
      "update asset_prices set usd_price = 1.0003 where chain_id = 8453 and asset_address = lower($1)",
      [USDC],
    );
    assert.equal(
      await prices().getUsdPriceWad(product),
      1_000_300_000_000_000_000n,
      "a new price, stamped now()",
    );
    const row = await table.getPrice(8453, USDC);
    assert.ok(row !== undefined && Math.abs(Date.now() - row.updatedAtMs) < 600_000);
  });

  test("ping: resolves while the table can be read, StoreUnavailableError once it cannot", async () => {
    const pgTable = new PostgresPriceTable(serving!);
    await pgTable.ping();
    await db!.pool.query("alter table asset_prices rename to asset_prices_away");
    try {
      await assert.rejects(pgTable.ping(), { name: "StoreUnavailableError" });
    } finally {
      await db!.pool.query("alter table asset_prices_away rename to asset_prices");
    }
    await pgTable.ping();
  });
});
