import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  formatUnits,
  isCanonicalDecimal,
  MAX_UINT256,
  parseAmount,
  parseDecimal,
} from "../../src/math/decimal.js";
import { integerNthRoot } from "../../src/math/integer-root.js";
import {
  annualYield,
  convertToAssets,
  floorDiv,
  monthlyGrowthFactor,
  monthlyYield,
  netApy,
  quoteYield,
  RATE_DECIMALS,
  ROOT_SCALE,
  usdValueCents,
  WAD,
} from "../../src/math/yield-math.js";
import { unwrap } from "../../src/result.js";
import { fcParams } from "../../src/testing/index.js";
import { YIELD_VECTORS } from "../../src/testing/yield-vectors.js";

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

interface ConvertVector {
  shares: string;
  total_assets: string;
  total_supply: string;
  decimals_offset: number;
  assets: string;
}

const vectors: {
  yield_calc: readonly YieldVector[];
  convert_to_assets_base_units: readonly ConvertVector[];
} = YIELD_VECTORS;

const S = ROOT_SCALE;
const S12 = S ** 12n;

// ---- generators ------------------------------------------------------------------------------

/** Principal in base units: mostly realistic, sometimes anywhere up to 2^256 − 1. */
const principal = fc.oneof(
  { weight: 3, arbitrary: fc.bigInt({ min: 1n, max: 10n ** 30n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: MAX_UINT256 }) },
);
/** A rate above −1 (a total loss has no monthly equivalent), up to +2000 %. */
const rate = fc.oneof(
  { weight: 3, arbitrary: fc.bigInt({ min: -WAD / 2n, max: WAD / 2n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -WAD + 1n, max: 20n * WAD }) },
);
const nonNegativeRate = fc.bigInt({ min: 0n, max: 20n * WAD });
/** Valid fee pairs: 0 ≤ s, 0 ≤ p, s + p ≤ 10000 (CONTRACT §2). */
const fees = fc.nat(10_000).chain((s) => fc.nat(10_000 - s).map((p) => [s, p] as const));
const assetDecimals = fc.integer({ min: 0, max: 24 });
const sortedPair = (arb: fc.Arbitrary<bigint>) =>
  fc.tuple(arb, arb).map(([x, y]) => (x <= y ? ([x, y] as const) : ([y, x] as const)));

// ---- published vectors -----------------------------------------------------------------------

describe("published vectors (YIELD_VECTORS, core/testing)", () => {
  test(`reproduces all ${vectors.yield_calc.length} yield_calc vectors digit for digit`, () => {
    assert.ok(vectors.yield_calc.length >= 40);
    for (const v of vectors.yield_calc) {
      const amount = parseAmount(v.amount, v.asset_decimals);
      assert.ok(amount.ok, v.amount);
      const quote = quoteYield({
        amountUnits: amount.value,
        assetDecimals: v.asset_decimals,
        underlyingApyWad: unwrap(parseDecimal(v.underlying_apy, RATE_DECIMALS)),
        serviceFeeBps: v.service_fee_bps,
        partnerFeeBps: v.partner_fee_bps,
      });
      assert.deepEqual(
        quote,
        {
          principal: v.principal,
          annual_yield: v.annual_yield,
          monthly_yield: v.monthly_yield,
          net_apy_for_user: v.net_apy_for_user,
        },
        JSON.stringify(v),
      );
    }
  });

  test(`reproduces all ${vectors.convert_to_assets_base_units.length} convert_to_assets vectors`, () => {
    assert.ok(vectors.convert_to_assets_base_units.length >= 20);
    for (const v of vectors.convert_to_assets_base_units) {
      const assets = convertToAssets(
        BigInt(v.shares),
        BigInt(v.total_assets),
        BigInt(v.total_supply),
        v.decimals_offset,
      );
      assert.equal(assets.toString(), v.assets, JSON.stringify(v));
    }
  });
});

// ---- unit behaviour --------------------------------------------------------------------------

describe("floorDiv", () => {
  test("rounds toward −∞ in every sign combination", () => {
    assert.equal(floorDiv(7n, 2n), 3n);
    assert.equal(floorDiv(-7n, 2n), -4n);
    assert.equal(floorDiv(7n, -2n), -4n);
    assert.equal(floorDiv(-7n, -2n), 3n);
    assert.equal(floorDiv(-8n, 2n), -4n);
    assert.equal(floorDiv(0n, -3n), 0n);
    assert.throws(() => floorDiv(1n, 0n), RangeError);
  });
});

describe("netApy", () => {
  test("charges fees on gains only", () => {
    assert.equal(netApy(WAD / 20n, 500, 500), (WAD * 45n) / 1000n);
    assert.equal(netApy(-WAD / 50n, 100, 100), -WAD / 50n);
    assert.equal(netApy(0n, 100, 100), 0n);
    assert.equal(netApy(WAD, 10_000, 0), 0n);
    assert.equal(netApy(3n, 0, 5_000), 1n, "truncated toward zero");
  });

  test("refuses fees outside 0 ≤ s, 0 ≤ p, s + p ≤ 10000", () => {
    assert.throws(() => netApy(WAD, -1, 0), RangeError);
    assert.throws(() => netApy(WAD, 0, -1), RangeError);
    assert.throws(() => netApy(WAD, 5_000, 5_001), RangeError);
    assert.throws(() => netApy(WAD, 1.5, 0), RangeError);
    assert.throws(() => netApy(WAD, Number.NaN, 0), RangeError);
  });
});

describe("monthlyGrowthFactor", () => {
  test("is S at zero and refuses n ≤ −1", () => {
    assert.equal(monthlyGrowthFactor(0n), S);
    assert.ok(monthlyGrowthFactor(-WAD + 1n) > 0n);
    assert.throws(() => monthlyGrowthFactor(-WAD), RangeError);
    assert.throws(() => monthlyGrowthFactor(-2n * WAD), RangeError);
  });

  test("doubling in a year is 2^(1/12) a month", () => {
    assert.equal(monthlyGrowthFactor(WAD), 1059463094359295264561825294946341700n);
  });
});

describe("convertToAssets and usdValueCents", () => {
  test("an empty vault and an empty wallet give 0", () => {
    assert.equal(convertToAssets(0n, 0n, 0n, 0), 0n);
    assert.equal(convertToAssets(0n, 10n ** 12n, 10n ** 24n, 12), 0n);
  });

  test("a MetaMorpho-style vault (δ = 18 − D) at par", () => {
    assert.equal(convertToAssets(10n ** 18n, 1_000_000n, 10n ** 18n, 12), 1_000_000n);
  });

  test("the virtual share can pay a holder more than the plain share when total_supply > total_assets × 10^δ", () => {
    // 2 of 3 shares of a 1-unit vault: the plain share is 2/3 of a unit, the virtual one is
    // floor(2 × 2 / 4) = 1. This is why the invariant below carries its precondition.
    assert.equal(convertToAssets(2n, 1n, 3n, 0), 1n);
  });

  test("refuses negative quantities and bad offsets", () => {
    assert.throws(() => convertToAssets(-1n, 1n, 1n, 0), RangeError);
    assert.throws(() => convertToAssets(1n, -1n, 1n, 0), RangeError);
    assert.throws(() => convertToAssets(1n, 1n, -1n, 0), RangeError);
    assert.throws(() => convertToAssets(1n, 1n, 1n, -1), RangeError);
    assert.throws(() => convertToAssets(1n, 1n, 1n, 0.5), RangeError);
  });

  test("usd value is floored to cents", () => {
    assert.equal(usdValueCents(1_234_567n, 6, 999_900_000_000_000_000n), 123n);
    assert.equal(formatUnits(usdValueCents(10n ** 18n, 18, 3_456_789n * 10n ** 15n), 2), "3456.78");
    assert.equal(usdValueCents(0n, 6, WAD), 0n);
    assert.equal(usdValueCents(1n, 6, WAD), 0n);
  });
});

describe("integerNthRoot", () => {
  test("small cases, perfect powers and their neighbours", () => {
    assert.equal(integerNthRoot(0n, 12), 0n);
    assert.equal(integerNthRoot(1n, 12), 1n);
    assert.equal(integerNthRoot(80n, 4n), 2n);
    assert.equal(integerNthRoot(81n, 4), 3n);
    assert.equal(integerNthRoot(12345n, 1), 12345n);
    for (const n of [2n, 3n, 12n, 31n]) {
      for (const k of [2n, 3n, 10n ** 20n + 7n, 2n ** 100n]) {
        assert.equal(integerNthRoot(k ** n, n), k);
        assert.equal(integerNthRoot(k ** n - 1n, n), k - 1n);
        assert.equal(integerNthRoot(k ** n + 1n, n), k);
      }
    }
  });

  test("refuses negative values and degrees below 1 or not integers", () => {
    assert.throws(() => integerNthRoot(-1n, 2), RangeError);
    assert.throws(() => integerNthRoot(4n, 0), RangeError);
    assert.throws(() => integerNthRoot(4n, -2n), RangeError);
    assert.throws(() => integerNthRoot(4n, 1.5), RangeError);
  });

  test("property: r^n ≤ x < (r + 1)^n, up to 450-digit x", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.bigInt({ min: 0n, max: 10n ** 40n }), fc.bigInt({ min: 0n, max: 10n ** 450n })),
        fc.integer({ min: 1, max: 40 }),
        (x, n) => {
          const r = integerNthRoot(x, n);
          const e = BigInt(n);
          assert.ok(r ** e <= x && x < (r + 1n) ** e);
        },
      ),
      fcParams(process.env),
    );
  });
});

// ---- CONTRACT §2 invariants, one test each ---------------------------------------------------

describe("CONTRACT §2 invariants", () => {
  test("fees never raise the yield: n ≤ a for a > 0", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 20n * WAD }), fees, (a, [s, p]) => {
        assert.ok(netApy(a, s, p) <= a);
      }),
      fcParams(process.env),
    );
  });

  test("0 ≤ n when a ≥ 0", () => {
    fc.assert(
      fc.property(nonNegativeRate, fees, (a, [s, p]) => {
        assert.ok(netApy(a, s, p) >= 0n);
      }),
      fcParams(process.env),
    );
  });

  test("yield is monotone in P (non-decreasing for n ≥ 0, non-increasing for n < 0)", () => {
    fc.assert(
      fc.property(sortedPair(principal), rate, ([p1, p2], n) => {
        const [a1, a2] = [annualYield(p1, n), annualYield(p2, n)];
        const [m1, m2] = [monthlyYield(p1, n), monthlyYield(p2, n)];
        if (n >= 0n) assert.ok(a1 <= a2 && m1 <= m2);
        else assert.ok(a1 >= a2 && m1 >= m2);
      }),
      fcParams(process.env),
    );
  });

  test("yield is monotone in a (same fees, same P)", () => {
    fc.assert(
      fc.property(principal, sortedPair(rate), fees, (p, [lowA, highA], [s, f]) => {
        const [n1, n2] = [netApy(lowA, s, f), netApy(highA, s, f)];
        assert.ok(n1 <= n2);
        assert.ok(annualYield(p, n1) <= annualYield(p, n2));
        assert.ok(monthlyYield(p, n1) <= monthlyYield(p, n2));
      }),
      fcParams(process.env),
    );
  });

  test("0 ≤ monthly ≤ annual / 12 for n ≥ 0, as 12 × monthly ≤ annual in base units", () => {
    fc.assert(
      fc.property(principal, nonNegativeRate, (p, n) => {
        const monthly = monthlyYield(p, n);
        assert.ok(monthly >= 0n);
        assert.ok(12n * monthly <= annualYield(p, n));
      }),
      fcParams(process.env),
    );
  });

  test("(1 + m)^12 ≤ 1 + n with m = (R − S) / S, i.e. R^12 × WAD ≤ S^12 × (WAD + n); R is the floor", () => {
    fc.assert(
      fc.property(rate, (n) => {
        const R = monthlyGrowthFactor(n);
        assert.ok(R ** 12n * WAD <= S12 * (WAD + n));
        assert.ok((R + 1n) ** 12n * WAD > S12 * (WAD + n), "R is the largest such integer");
      }),
      fcParams(process.env),
    );
  });

  test("annual is exact to the last base unit: annual × WAD ≤ P × n < (annual + 1) × WAD", () => {
    fc.assert(
      fc.property(principal, rate, (p, n) => {
        const annual = annualYield(p, n);
        assert.ok(annual * WAD <= p * n && p * n < (annual + 1n) * WAD);
      }),
      fcParams(process.env),
    );
  });

  test("monthly is exact to the last base unit: monthly × S ≤ P × (R − S) < (monthly + 1) × S", () => {
    fc.assert(
      fc.property(principal, rate, (p, n) => {
        const monthly = monthlyYield(p, n);
        const scaled = p * (monthlyGrowthFactor(n) - S);
        assert.ok(monthly * S <= scaled && scaled < (monthly + 1n) * S);
      }),
      fcParams(process.env),
    );
  });

  test("formatting then parsing an amount is the identity (and principal echoes it)", () => {
    fc.assert(
      fc.property(principal, assetDecimals, nonNegativeRate, (p, d, a) => {
        const quote = quoteYield({
          amountUnits: p,
          assetDecimals: d,
          underlyingApyWad: a,
          serviceFeeBps: 0,
          partnerFeeBps: 0,
        });
        assert.deepEqual(parseAmount(quote.principal, d), { ok: true, value: p });
        assert.equal(unwrap(parseDecimal(quote.net_apy_for_user, RATE_DECIMALS)), a);
      }),
      fcParams(process.env),
    );
  });

  test("assets is the floor of the virtual share: assets × (supply + 10^δ) ≤ shares × (total + 1) < (assets + 1) × (supply + 10^δ)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.integer({ min: 0, max: 18 }),
        (shares, total, supply, delta) => {
          const assets = convertToAssets(shares, total, supply, delta);
          const denominator = supply + 10n ** BigInt(delta);
          const numerator = shares * (total + 1n);
          assert.ok(assets * denominator <= numerator && numerator < (assets + 1n) * denominator);
        },
      ),
      fcParams(process.env),
    );
  });

  test("assets never exceeds the exact share of total_assets: assets × supply ≤ shares × total when supply ≤ total × 10^δ", () => {
    // With virtual shares, (total + 1) / (supply + 10^δ) ≤ total / supply ⟺ supply ≤ total × 10^δ,
    // i.e. the share price has not fallen below the virtual share's 1 / 10^δ. Outside that the
    // virtual share can round up past the plain one (see the unit test above).
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 30n }),
        fc.bigInt({ min: 1n, max: 10n ** 40n }),
        fc.integer({ min: 0, max: 18 }),
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        (total, rawSupply, delta, rawShares) => {
          const supply = 1n + (rawSupply % (total * 10n ** BigInt(delta)));
          const shares = rawShares % (supply + 1n);
          const assets = convertToAssets(shares, total, supply, delta);
          assert.ok(assets * supply <= shares * total);
        },
      ),
      fcParams(process.env),
    );
  });

  test("holders never get more than total_assets: shares ≤ supply ⇒ assets ≤ total (any share price)", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.integer({ min: 0, max: 18 }),
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        (total, supply, delta, rawShares) => {
          const shares = rawShares % (supply + 1n);
          assert.ok(convertToAssets(shares, total, supply, delta) <= total);
        },
      ),
      fcParams(process.env),
    );
  });

  test("assets is monotone in shares", () => {
    fc.assert(
      fc.property(
        sortedPair(fc.bigInt({ min: 0n, max: 10n ** 40n })),
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.bigInt({ min: 0n, max: 10n ** 40n }),
        fc.integer({ min: 0, max: 18 }),
        ([s1, s2], total, supply, delta) => {
          assert.ok(convertToAssets(s1, total, supply, delta) <= convertToAssets(s2, total, supply, delta));
        },
      ),
      fcParams(process.env),
    );
  });

  test("annual yield is floor-superadditive: y(P₁) + y(P₂) ≤ y(P₁ + P₂) ≤ y(P₁) + y(P₂) + 1", () => {
    fc.assert(
      fc.property(principal, principal, rate, (p1, p2, n) => {
        const parts = annualYield(p1, n) + annualYield(p2, n);
        const whole = annualYield(p1 + p2, n);
        assert.ok(parts <= whole && whole <= parts + 1n);
      }),
      fcParams(process.env),
    );
  });

  test("monthly yield is floor-superadditive: y(P₁) + y(P₂) ≤ y(P₁ + P₂) ≤ y(P₁) + y(P₂) + 1", () => {
    fc.assert(
      fc.property(principal, principal, rate, (p1, p2, n) => {
        const parts = monthlyYield(p1, n) + monthlyYield(p2, n);
        const whole = monthlyYield(p1 + p2, n);
        assert.ok(parts <= whole && whole <= parts + 1n);
      }),
      fcParams(process.env),
    );
  });

  test("net APY never rises with a fee: more fee bps → n not larger", () => {
    fc.assert(
      fc.property(rate, fees, fees, (a, first, second) => {
        const [low, high] = first[0] + first[1] <= second[0] + second[1] ? [first, second] : [second, first];
        assert.ok(netApy(a, high[0], high[1]) <= netApy(a, low[0], low[1]));
      }),
      fcParams(process.env),
    );
  });

  test('results do not depend on how the amount was written ("1.50" and "1.5")', () => {
    assert.deepEqual(quoteFor("1.50", 2, WAD / 20n, 100, 100), quoteFor("1.5", 2, WAD / 20n, 100, 100));
    fc.assert(
      fc.property(principal, assetDecimals, rate, fees, fc.nat(24), (p, d, a, [s, f], extra) => {
        const canonical = formatUnits(p, d);
        const fraction = canonical.includes(".") ? canonical.length - canonical.indexOf(".") - 1 : 0;
        const zeros = Math.min(extra, d - fraction);
        fc.pre(zeros > 0);
        const padded = (fraction === 0 ? canonical + "." : canonical) + "0".repeat(zeros);
        assert.deepEqual(quoteFor(padded, d, a, s, f), quoteFor(canonical, d, a, s, f));
      }),
      fcParams(process.env),
    );
  });

  test("every output matches the canonical decimal form", () => {
    fc.assert(
      fc.property(principal, assetDecimals, rate, fees, (p, d, a, [s, f]) => {
        const quote = quoteYield({
          amountUnits: p,
          assetDecimals: d,
          underlyingApyWad: a,
          serviceFeeBps: s,
          partnerFeeBps: f,
        });
        for (const value of Object.values(quote)) assert.ok(isCanonicalDecimal(value), value);
        assert.equal(quote.principal, formatUnits(p, d));
      }),
      fcParams(process.env),
    );
  });
});

function quoteFor(amount: string, decimals: number, apy: bigint, service: number, partner: number) {
  const parsed = parseAmount(amount, decimals);
  assert.ok(parsed.ok, amount);
  return quoteYield({
    amountUnits: parsed.value,
    assetDecimals: decimals,
    underlyingApyWad: apy,
    serviceFeeBps: service,
    partnerFeeBps: partner,
  });
}

describe("fcParams", () => {
  test("a failing property reports its seed and path, so it can be replayed", () => {
    const { path: _ignored, ...params } = fcParams(process.env);
    assert.throws(
      () =>
        fc.assert(
          fc.property(fc.nat(), (x) => x < 10),
          { ...params, seed: params.seed ?? 42 },
        ),
      (error: unknown) => error instanceof Error && /seed/.test(error.message) && /path/.test(error.message),
    );
  });
});
