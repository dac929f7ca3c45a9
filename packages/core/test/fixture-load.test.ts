/**
 * What the loader makes of a team's own fixture data: addresses in any accepted case are served in
 * EIP-55 form, and a product whose asset has no USD price is refused at load, not discovered as
 * 503s on its holders' positions.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createPartnerApi, FixtureError, loadFixtures, toChecksumAddress } from "../src/index.js";
import { DEMO, readFixtureFiles } from "./sandbox.js";

type Rows = Record<string, any>[];

function withRows(edit: (files: { products: Rows; vaults: Rows; prices: Rows }) => void) {
  const files = structuredClone(readFixtureFiles());
  edit({
    products: files["products.json"] as Rows,
    vaults: files["vaults.json"] as Rows,
    prices: files["prices.json"] as Rows,
  });
  return files;
}

async function get(files: ReturnType<typeof readFixtureFiles>, path: string, query = "") {
  const api = createPartnerApi({ environment: "sandbox", ...loadFixtures(files) });
  const res = await api.handle({
    method: "GET",
    path,
    query,
    headers: { "x-api-key": DEMO.sandboxApiKey },
    clientAddress: "192.0.2.1",
  });
  return { status: res.status, body: JSON.parse(res.body ?? "null") };
}

const ADDRESS_FIELDS = ["wrapper_address", "underlying_vault_address", "asset_address"] as const;

for (const [form, recase] of [
  ["all-lowercase", (a: string) => a.toLowerCase()],
  ["all-uppercase", (a: string) => `0x${a.slice(2).toUpperCase()}`],
] as const) {
  test(`${form} addresses in every fixture file are served in EIP-55 form`, async () => {
    const original = readFixtureFiles()["products.json"] as Rows;
    const slug = original[0]!["slug"] as string;
    const files = withRows(({ products, vaults, prices }) => {
      for (const field of ADDRESS_FIELDS) products[0]![field] = recase(products[0]![field]);
      for (const vault of vaults) vault["wrapper_address"] = recase(vault["wrapper_address"]);
      for (const price of prices) price["asset_address"] = recase(price["asset_address"]);
    });
    assert.notEqual((files["products.json"] as Rows)[0]!["asset_address"], original[0]!["asset_address"]);

    const record = loadFixtures(files).productRecords.find((p) => p.slug === slug)!;
    assert.equal(record.assetAddress, original[0]!["asset_address"]);

    const product = await get(files, `/api/partner/products/${slug}`);
    assert.equal(product.status, 200);
    for (const field of ADDRESS_FIELDS) {
      const served = product.body.data[field] as string;
      assert.equal(served, toChecksumAddress(served), `${field} ${served}`);
      assert.equal(served, original[0]![field]);
    }
    const listed = await get(files, "/api/partner/products");
    const fromList = (listed.body.data as Rows).find((p) => p["slug"] === slug)!;
    assert.equal(fromList["asset_address"], original[0]!["asset_address"]);

    // The re-cased vault and price rows still belong to the product: shares, assets and a USD value.
    const position = await get(
      files,
      `/api/partner/products/${slug}/position`,
      `address=${DEMO.walletWithPositions}`,
    );
    assert.equal(position.status, 200, JSON.stringify(position.body));
    assert.notEqual(position.body.data.shares, "0");
    assert.notEqual(position.body.data.usd_value, "0");
  });
}

test("a mixed-case address whose checksum is wrong is still refused, naming the field", () => {
  const files = withRows(({ prices }) => {
    const address = prices[2]!["asset_address"] as string;
    const flipped = /[a-f]/.exec(address.slice(2))!;
    const i = flipped.index + 2;
    prices[2]!["asset_address"] =
      address.slice(0, i) + address.charAt(i).toUpperCase() + address.slice(i + 1);
  });
  assert.throws(
    () => loadFixtures(files, { dir: "data" }),
    (error: unknown) =>
      error instanceof FixtureError &&
      error.file === "data/prices.json" &&
      error.field === "[2].asset_address",
  );
});

test("a product whose asset has no USD price is refused at load, naming the product and the missing price", () => {
  const products = readFixtureFiles()["products.json"] as Rows;
  const target = products.findIndex((p) => p["slug"] === "wbtc-arbitrum-core");
  const asset = products[target]!["asset_address"] as string;
  const files = withRows(({ prices }) => {
    const i = prices.findIndex((p) => p["asset_address"] === asset && p["chain_id"] === 42161);
    prices.splice(i, 1);
  });
  assert.throws(
    () => loadFixtures(files, { dir: "data" }),
    (error: unknown) => {
      assert.ok(error instanceof FixtureError, String(error));
      assert.equal(error.file, "data/products.json");
      assert.equal(error.field, `[${target}].asset_address`);
      assert.match(
        error.message,
        new RegExp(`no USD price for WBTC ${asset} on chain 42161 in prices\\.json`),
      );
      assert.match(error.message, /503/);
      return true;
    },
  );
});

test("the same asset priced on another chain does not count as its price", () => {
  const products = readFixtureFiles()["products.json"] as Rows;
  const target = products.findIndex((p) => p["slug"] === "usdc-base-prime");
  const files = withRows(({ prices }) => {
    const i = prices.findIndex((p) => p["asset_address"] === products[target]!["asset_address"]);
    prices[i]!["chain_id"] = 1; // same address, wrong chain
  });
  assert.throws(
    () => loadFixtures(files),
    (error: unknown) => error instanceof FixtureError && error.field === `[${target}].asset_address`,
  );
});
