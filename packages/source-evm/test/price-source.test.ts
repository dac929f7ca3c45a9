import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type ProductRecord, StoreUnavailableError } from "@partner-yield/core";
import {
  MemoryPriceTable,
  PriceTableError,
  parsePriceTable,
  TablePriceSource,
} from "@partner-yield/source-evm";
import { FilePriceTable } from "@partner-yield/source-evm/file-price-table";

const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const T0 = Date.parse("2026-11-20T10:00:00Z");
const product = { chainId: 8453, assetAddress: USDC, assetSymbol: "USDC" } as ProductRecord;
const row = { chainId: 8453, assetAddress: USDC, usdPriceWad: 999_800_000_000_000_000n, updatedAtMs: T0 };

test("a fresh price is served; one past the maximum age is a 503, never the stale value", async () => {
  let now = T0;
  const logged: string[] = [];
  const prices = new TablePriceSource(new MemoryPriceTable([row]), {
    maxAgeSeconds: 600,
    now: () => now,
    log: (l) => logged.push(l),
  });
  assert.equal(await prices.getUsdPriceWad(product), row.usdPriceWad);
  now = T0 + 600_000;
  assert.equal(await prices.getUsdPriceWad(product), row.usdPriceWad, "exactly the maximum age is served");
  now = T0 + 600_001;
  await assert.rejects(prices.getUsdPriceWad(product), (e: unknown) => {
    assert.ok(e instanceof StoreUnavailableError);
    assert.match(e.message, /USDC on chain 8453 is 600 s old \(at most 600 s is served\)/);
    return true;
  });
  assert.equal(logged.length, 1);
  assert.deepEqual(await prices.ages([product]), [
    { chainId: 8453, assetAddress: USDC, assetSymbol: "USDC", ageSeconds: 600, status: "stale" },
  ]);
});

test("a price dated ahead beyond the clock skew is refused; within it, served", async () => {
  let now = T0 - 30_000;
  const prices = new TablePriceSource(new MemoryPriceTable([row]), { maxAgeSeconds: 60, now: () => now });
  assert.equal(await prices.getUsdPriceWad(product), row.usdPriceWad);
  now = T0 - 61_000;
  await assert.rejects(prices.getUsdPriceWad(product), StoreUnavailableError);
});

test("no row: undefined (the core answers 503 for a holding without a price)", async () => {
  const prices = new TablePriceSource(new MemoryPriceTable(), { maxAgeSeconds: 60 });
  assert.equal(await prices.getUsdPriceWad(product), undefined);
  assert.equal((await prices.ages([product]))[0]?.status, "missing");
});

test("the price file format: every field checked, named by JSON pointer", () => {
  const good = {
    chain_id: 8453,
    asset_address: USDC.toLowerCase(),
    usd_price: "0.9998",
    updated_at: "2026-11-20T10:00:00Z",
  };
  assert.deepEqual(parsePriceTable([good]), [{ ...row, assetAddress: USDC }]);
  for (const [bad, pointer] of [
    [{ ...good, usd_price: 0.9998 }, "/0/usd_price"],
    [{ ...good, usd_price: "1e3" }, "/0/usd_price"],
    [{ ...good, updated_at: "2026-11-20 10:00" }, "/0/updated_at"],
    [{ ...good, asset_address: "0x123" }, "/0/asset_address"],
    [{ ...good, chain_id: "8453" }, "/0/chain_id"],
    [{ ...good, extra: 1 }, "/0/extra"],
  ] as const) {
    assert.throws(
      () => parsePriceTable([bad]),
      (e: unknown) => e instanceof PriceTableError && e.field === pointer,
    );
  }
  assert.throws(() => parsePriceTable({}), PriceTableError);
});

const dir = mkdtempSync(join(tmpdir(), "source-evm-prices-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("FilePriceTable re-reads the file when a feed rewrites it, and is 503 while it is broken", async () => {
  const file = join(dir, "prices.json");
  const write = (price: string, at: string) =>
    writeFileSync(
      file,
      JSON.stringify([{ chain_id: 8453, asset_address: USDC, usd_price: price, updated_at: at }]),
    );
  write("1", "2026-11-20T10:00:00Z");
  const table = new FilePriceTable(file);
  assert.equal((await table.getPrice(8453, USDC))?.usdPriceWad, 10n ** 18n);
  write("1.25", "2026-11-20T10:05:00+00:00");
  assert.deepEqual(await table.getPrice(8453, USDC.toLowerCase()), {
    usdPriceWad: 1_250_000_000_000_000_000n,
    updatedAtMs: T0 + 300_000,
  });
  writeFileSync(file, "[{");
  await assert.rejects(table.getPrice(8453, USDC), StoreUnavailableError);
  rmSync(file);
  await assert.rejects(table.getPrice(8453, USDC), StoreUnavailableError);
});
