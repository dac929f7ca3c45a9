/**
 * The docs cannot drift: the tables of docs/conformance.md and docs/math.md are the registries,
 * their sample outputs are what real runs print, and the worked examples of docs/math.md are what
 * the code computes.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import {
  annualYield,
  convertToAssets,
  formatUnits,
  monthlyGrowthFactor,
  netApy,
  parseDecimal,
  quoteYield,
  unwrap,
  usdValueCents,
} from "@partner-yield/core/math";
import { GENERATED_BLOCKS } from "../src/docs/blocks.js";
import { replaceGenerated } from "../src/docs/tables.js";

const root = new URL("../../", import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), "utf8");

describe("generated tables and sample outputs", () => {
  for (const [file, blocks] of Object.entries(GENERATED_BLOCKS)) {
    for (const [name, render] of Object.entries(blocks)) {
      test(`${file}: the "${name}" block is what the code prints (regenerate: npx -y pnpm@10 docs:tables)`, async () => {
        const document = read(file);
        assert.equal(replaceGenerated(document, name, await render()), document);
      });
    }
  }
});

describe("docs/math.md worked examples are what the code computes", () => {
  const math = read("docs/math.md");
  const wad = (text: string) => unwrap(parseDecimal(text, 18));
  const quote = (units: bigint, decimals: number, apy: string, s: number, p: number) =>
    quoteYield({
      amountUnits: units,
      assetDecimals: decimals,
      underlyingApyWad: wad(apy),
      serviceFeeBps: s,
      partnerFeeBps: p,
    });

  test("1000 USDC in usdc-base-prime", () => {
    assert.deepEqual(quote(1_000_000_000n, 6, "0.0523", 50, 100), {
      principal: "1000",
      annual_yield: "51.5155",
      monthly_yield: "4.194811",
      net_apy_for_user: "0.0515155",
    });
    const r = monthlyGrowthFactor(netApy(wad("0.0523"), 50, 100));
    assert.equal(r, 1004194811770316591104125646205150027n);
    for (const text of ["0.0515155", "51.5155", "4.194811", "1004194811770316591104125646205150027"]) {
      assert.ok(math.includes(text), text);
    }
  });

  test("losses, dust, WBTC and the published vector", () => {
    assert.deepEqual(quote(1_000_000_000n, 6, "-0.0125", 50, 50), {
      principal: "1000",
      annual_yield: "-12.5",
      monthly_yield: "-1.047683",
      net_apy_for_user: "-0.0125",
    });
    assert.equal(quote(1n, 6, "-0.0125", 50, 50).annual_yield, "-0.000001");
    assert.equal(quote(1n, 6, "0.0523", 50, 100).annual_yield, "0");
    assert.deepEqual(quote(12_345_678n, 8, "0.0132", 25, 25), {
      principal: "0.12345678",
      annual_yield: "0.00162148",
      monthly_yield: "0.00013431",
      net_apy_for_user: "0.013134",
    });
    assert.equal(quote(1_000_000_000n, 6, "0.05", 0, 0).monthly_yield, "4.074123");
    for (const text of [
      '"-12.5"',
      '"-1.047683"',
      '"-0.000001"',
      '"0.00162148"',
      '"0.00013431"',
      '"4.074123"',
    ]) {
      assert.ok(math.includes(text), text);
    }
  });

  test("the position example and the split deposit", () => {
    const assets = convertToAssets(1500250000000000000000n, 12345678901234n, 11900000000000000000000000n, 12);
    assert.equal(formatUnits(assets, 6), "1556.437375");
    assert.equal(formatUnits(usdValueCents(assets, 6, wad("0.9998")), 2), "1556.12");
    const n = netApy(wad("0.0523"), 50, 100);
    assert.equal(formatUnits(annualYield(333_333_333n, n), 6), "17.171833");
    assert.equal(formatUnits(annualYield(666_666_667n, n), 6), "34.343666");
    for (const text of ["1556.437375", "1556.12", "17.171833", "34.343666", "51.515499"])
      assert.ok(math.includes(text), text);
  });
});
