/**
 * The harness's oracle is a second implementation of CONTRACT §2: it must agree with the core on
 * the published vectors and on generated cases (10,000 and more), or one of the two is wrong.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseApiKey } from "@partner-yield/core";
import {
  convertToAssets,
  formatUnits,
  MAX_UINT256,
  monthlyGrowthFactor,
  parseDecimal,
  quoteYield,
  unwrap,
  usdValueCents,
} from "@partner-yield/core/math";
import { type ConvertToAssetsVector, YIELD_VECTORS } from "@partner-yield/core/testing";
import fc from "fast-check";
import { wellFormedKey } from "../src/checks/auth.js";
import { fromBaseUnits, isCanonical, toBaseUnits } from "../src/oracle/decimal.js";
import { convertedAssets, usdValue } from "../src/oracle/position.js";
import {
  expectedQuote,
  isMonthlyFactor,
  monthlyFactor,
  netApyUnits,
  yieldUnits,
} from "../src/oracle/yield.js";

interface YieldVector {
  amount: string;
  asset_decimals: number;
  underlying_apy: string;
  service_fee_bps: number;
  partner_fee_bps: number;
  principal: string;
  net_apy_for_user: string;
  annual_yield: string;
  monthly_yield: string;
}

/** The published vectors (CONTRACT §2), the one copy core's testing subpath holds. */
const vectors: {
  yield_calc: readonly YieldVector[];
  convert_to_assets_base_units: readonly ConvertToAssetsVector[];
} = YIELD_VECTORS;

/** Generated cases per comparison; FC_NUM_RUNS raises it for a long run. */
const CASES = Math.max(10_000, Number(process.env["FC_NUM_RUNS"] ?? 0));
const SEED = Number(process.env["FC_SEED"] ?? 20261123);

const decimals = fc.oneof(fc.constantFrom(0, 2, 6, 8, 18), fc.integer({ min: 0, max: 36 }));
/** A rate as the product list writes it: up to 18 fractional digits, above −100 %, up to +2000 %. */
const rateText = fc
  .oneof(
    { weight: 3, arbitrary: fc.bigInt({ min: -(10n ** 18n) / 2n, max: 10n ** 18n / 2n }) },
    { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 18n) + 1n, max: 20n * 10n ** 18n }) },
  )
  .map((units) => formatUnits(units, 18));
const fees = fc.nat(10_000).chain((s) => fc.nat(10_000 - s).map((p) => [s, p] as const));
const baseUnits = fc.oneof(
  { weight: 3, arbitrary: fc.bigInt({ min: 1n, max: 10n ** 30n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: MAX_UINT256 }) },
);

describe("the oracle agrees with the published vectors", () => {
  test(`every yield_calc vector (${vectors.yield_calc.length})`, () => {
    for (const v of vectors.yield_calc) {
      const quote = expectedQuote(v.amount, {
        assetDecimals: v.asset_decimals,
        underlyingApy: v.underlying_apy,
        serviceFeeBps: v.service_fee_bps,
        partnerFeeBps: v.partner_fee_bps,
      });
      const { principal, annual_yield, monthly_yield, net_apy_for_user } = v;
      assert.deepEqual(quote, { principal, annual_yield, monthly_yield, net_apy_for_user }, v.amount);
    }
  });

  test(`every convert_to_assets vector (${vectors.convert_to_assets_base_units.length})`, () => {
    for (const v of vectors.convert_to_assets_base_units) {
      const assets = convertedAssets(
        BigInt(v.shares),
        BigInt(v.total_assets),
        BigInt(v.total_supply),
        v.decimals_offset,
      );
      assert.equal(assets, BigInt(v.assets));
    }
  });
});

describe(`the oracle agrees with the core on ${CASES} generated cases each`, () => {
  test("yield figures digit for digit, with the same monthly factor R within its defining bounds", () => {
    fc.assert(
      fc.property(baseUnits, decimals, rateText, fees, (units, d, apy, [s, p]) => {
        const core = quoteYield({
          amountUnits: units,
          assetDecimals: d,
          underlyingApyWad: unwrap(parseDecimal(apy, 18)),
          serviceFeeBps: s,
          partnerFeeBps: p,
        });
        const n = netApyUnits(apy, s, p);
        const r = monthlyFactor(n);
        assert.ok(isMonthlyFactor(r, n), `R = ${r} fails R^12 ≤ S^12 (1 + n) < (R + 1)^12`);
        assert.equal(r, monthlyGrowthFactor(n));
        const { annual, monthly } = yieldUnits(toBaseUnits(formatUnits(units, d), d), n, r);
        assert.deepEqual(
          {
            principal: fromBaseUnits(units, d),
            annual_yield: fromBaseUnits(annual, d),
            monthly_yield: fromBaseUnits(monthly, d),
            net_apy_for_user: fromBaseUnits(n, 18),
          },
          { ...core },
        );
      }),
      { numRuns: CASES, seed: SEED },
    );
  });

  test("whole quotes from the amount text (a thousand cases: the figures above, end to end)", () => {
    fc.assert(
      fc.property(baseUnits, decimals, rateText, fees, (units, d, apy, [s, p]) => {
        const terms = { assetDecimals: d, underlyingApy: apy, serviceFeeBps: s, partnerFeeBps: p };
        const core = quoteYield({
          amountUnits: units,
          assetDecimals: d,
          underlyingApyWad: unwrap(parseDecimal(apy, 18)),
          serviceFeeBps: s,
          partnerFeeBps: p,
        });
        assert.deepEqual(expectedQuote(formatUnits(units, d), terms), { ...core });
      }),
      { numRuns: 1000, seed: SEED },
    );
  });

  test("positions: convertToAssets and the USD value", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.integer({ min: 0, max: 18 }),
        fc.integer({ min: 0, max: 24 }),
        fc.bigInt({ min: 1n, max: 10n ** 24n }),
        (shares, total, supply, offset, d, priceWad) => {
          const assets = convertedAssets(shares, total, supply, offset);
          assert.equal(assets, convertToAssets(shares, total, supply, offset));
          const price = formatUnits(priceWad, 18);
          assert.equal(usdValue(assets, d, price), formatUnits(usdValueCents(assets, d, priceWad), 2));
        },
      ),
      { numRuns: CASES, seed: SEED },
    );
  });

  test("decimal text: parsing and formatting round-trip, canonical as the core's", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -MAX_UINT256, max: MAX_UINT256 }), decimals, (units, d) => {
        const text = fromBaseUnits(units, d);
        assert.equal(text, formatUnits(units, d));
        assert.ok(isCanonical(text), text);
        assert.equal(toBaseUnits(text, d), units);
        assert.equal(toBaseUnits(`${text}${text.includes(".") ? "" : "."}000`, d), units);
      }),
      { numRuns: CASES, seed: SEED },
    );
  });
});

describe("the harness's own API keys (CONTRACT §4 format, built without the core)", () => {
  test("are well-formed by the core's offline check, for both environments", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.constantFrom("sandbox", "production"),
        (bytes, env) => {
          const key = wellFormedKey(env as "sandbox" | "production", bytes);
          assert.deepEqual(parseApiKey(key), { ok: true, value: env });
        },
      ),
      { numRuns: 500, seed: SEED },
    );
  });
});

describe("the oracle refuses what it cannot represent", () => {
  test("a rate or amount with digits beyond its precision, and text that is no number", () => {
    assert.throws(() => toBaseUnits("1.0000001", 6), /more than 6/);
    for (const bad of ["", ".", "1e3", "abc", "1,5", "--1"]) assert.throws(() => toBaseUnits(bad, 6), bad);
    assert.throws(() => netApyUnits("0.05", 6000, 5000), /exceed 100 %/);
    assert.throws(() => monthlyFactor(-(10n ** 18n)), /1 \+ n > 0/);
    assert.ok(!isCanonical("-0") && !isCanonical("1.50") && !isCanonical("01") && isCanonical("-0.5"));
  });
});
