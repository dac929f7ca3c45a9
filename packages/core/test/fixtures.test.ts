import assert from "node:assert/strict";
import { test } from "node:test";
import { FixtureError, hashApiKey, loadFixtures } from "../src/index.js";
import { DEMO, loadSandbox, readFixtureFiles } from "./sandbox.js";

function broken(
  file: "partners.json" | "products.json" | "vaults.json" | "prices.json",
  edit: (rows: any[]) => void,
) {
  const files = readFixtureFiles();
  const rows = structuredClone(files[file]) as any[];
  edit(rows);
  return () => loadFixtures({ ...files, [file]: rows }, { dir: "fixtures" });
}

function expectFixtureError(load: () => unknown, file: string, field: string | RegExp) {
  assert.throws(load, (error: unknown) => {
    assert.ok(error instanceof FixtureError, String(error));
    assert.equal(error.file, `fixtures/${file}`);
    if (typeof field === "string") assert.equal(error.field, field);
    else assert.match(error.field, field);
    assert.ok(error.message.startsWith(`fixtures/${file}: `), error.message);
    return true;
  });
}

test("the sandbox fixtures cover what the tests and the demo need", async () => {
  const data = loadSandbox();
  assert.ok(data.partnerList.length >= 2);
  const products = data.productRecords;
  assert.ok(products.length >= 6);
  assert.ok(new Set(products.map((p) => p.chain)).size >= 3);
  for (const d of [6, 8, 18])
    assert.ok(
      products.some((p) => p.assetDecimals === d),
      `asset decimals ${d}`,
    );
  for (const s of ["active", "paused", "deprecated"])
    assert.ok(
      products.some((p) => p.status === s),
      s,
    );
  assert.ok(products.some((p) => p.metrics === null));
  assert.ok(products.some((p) => p.decimalsOffset > 0));
  const withShares = await Promise.all(
    products.map((p) => data.positions.getHolding(p, DEMO.walletWithPositions)),
  );
  assert.ok(withShares.filter((h) => h.shares > 0n).length >= 3);
  for (const p of products.filter((x) => x.metrics !== null)) {
    assert.ok((await data.prices.getUsdPriceWad(p)) !== undefined, `price for ${p.slug}`);
  }
});

test("the demo keys are in the fixtures by hash only", async () => {
  const data = loadSandbox();
  const record = await data.keys.findByHash(hashApiKey(DEMO.sandboxApiKey));
  assert.equal(record?.partnerId, DEMO.partnerId);
  assert.equal(record?.environment, "sandbox");
  const raw = JSON.stringify(readFixtureFiles());
  assert.ok(!raw.includes(DEMO.sandboxApiKey));
  assert.ok(!raw.includes(DEMO.productionApiKey));
});

test("a broken fixture fails loudly, naming the file and the field", () => {
  expectFixtureError(
    broken("products.json", (r) => {
      r[0].service_fee_bps = 6000;
      r[0].partner_fee_bps = 5000;
    }),
    "products.json",
    "[0].partner_fee_bps",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[1].chain_id = 2;
    }),
    "products.json",
    "[1].chain_id",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[1].chain = "atlantis";
    }),
    "products.json",
    "[1].chain",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[2].partner_id = "ghost";
    }),
    "products.json",
    "[2].partner_id",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[0].status = "archived";
    }),
    "products.json",
    "[0].status",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[0].metrics.underlying_apy = "5%";
    }),
    "products.json",
    "[0].metrics.underlying_apy",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[0].metrics.underlying_apy = "-1";
    }),
    "products.json",
    "[0].metrics.underlying_apy",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[0].asset_address =
        r[0].asset_address.slice(0, 2) +
        (r[0].asset_address[2] === "a" ? "A" : "a") +
        r[0].asset_address.slice(3);
    }),
    "products.json",
    "[0].asset_address",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[3].slug = r[0].slug;
    }),
    "products.json",
    "[3].slug",
  );
  expectFixtureError(
    broken("products.json", (r) => {
      r[0].surprise = 1;
    }),
    "products.json",
    /^\[0\]/,
  );
  expectFixtureError(
    broken("partners.json", (r) => {
      r[0].api_keys[0].key_hash = "ABC";
    }),
    "partners.json",
    "[0].api_keys[0].key_hash",
  );
  expectFixtureError(
    broken("partners.json", (r) => {
      r[0].signing_secrets = ["secret"];
    }),
    "partners.json",
    "[0].signing_secrets[0]",
  );
  expectFixtureError(
    broken("vaults.json", (r) => {
      r[0].total_supply = "1e24";
    }),
    "vaults.json",
    "[0].total_supply",
  );
  expectFixtureError(
    broken("prices.json", (r) => {
      r[0].usd_price = 1;
    }),
    "prices.json",
    "[0].usd_price",
  );
  expectFixtureError(
    broken("partners.json", (r) => {
      r[1].api_keys[0].key_hash = r[0].api_keys[0].key_hash;
    }),
    "partners.json",
    "[1].api_keys[0].key_hash",
  );
  const files = readFixtureFiles();
  expectFixtureError(
    () => loadFixtures({ ...files, "vaults.json": undefined }, { dir: "fixtures" }),
    "vaults.json",
    "",
  );
});
