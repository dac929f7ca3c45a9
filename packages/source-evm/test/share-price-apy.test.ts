import assert from "node:assert/strict";
import { test } from "node:test";
import { WAD } from "@partner-yield/core/math";
import { MIN_APY_WAD, SECONDS_PER_YEAR, sharePriceApy, sharePriceProbe } from "@partner-yield/source-evm";
import fc from "fast-check";

const DAY = 86_400n;

test("worked examples of docs/math.md", () => {
  // +0.01 % in a day → 0.0365 (simple annualisation, 365 days).
  assert.equal(sharePriceApy(10n ** 24n, 10n ** 24n + 10n ** 20n, DAY), 36_500_000_000_000_000n);
  // Unchanged price → 0.
  assert.equal(sharePriceApy(123_456_789n, 123_456_789n, 3600n), 0n);
  // A year of +5 % → exactly 0.05.
  assert.equal(sharePriceApy(100n, 105n, SECONDS_PER_YEAR), WAD / 20n);
  // A loss rounds toward −∞: −1/3 of a unit over a year.
  assert.equal(sharePriceApy(3n, 2n, SECONDS_PER_YEAR), -333_333_333_333_333_334n);
});

test("a drop that annualises to −100 % or worse is reported just above −1", () => {
  assert.equal(sharePriceApy(100n, 50n, DAY), MIN_APY_WAD);
  assert.equal(sharePriceApy(100n, 0n, 1n), MIN_APY_WAD);
});

test("refuses inputs that have no rate", () => {
  assert.throws(() => sharePriceApy(0n, 1n, DAY), RangeError);
  assert.throws(() => sharePriceApy(1n, -1n, DAY), RangeError);
  assert.throws(() => sharePriceApy(1n, 2n, 0n), RangeError);
  assert.throws(() => sharePriceProbe(37), RangeError);
  assert.equal(sharePriceProbe(6), 10n ** 24n);
});

test("exact to the last 10^-18 and never above the compound rate (Bernoulli)", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 1n, max: 10n ** 40n }),
      fc.bigInt({ min: 0n, max: 10n ** 40n }),
      fc.bigInt({ min: 1n, max: SECONDS_PER_YEAR }),
      (p0, p1, dt) => {
        const apy = sharePriceApy(p0, p1, dt);
        const exactNumerator = (p1 - p0) * SECONDS_PER_YEAR * WAD;
        const denominator = p0 * dt;
        if (apy > MIN_APY_WAD) {
          // floor: apy ≤ exact < apy + 1 (in 10^-18 units)
          assert.ok(apy * denominator <= exactNumerator);
          assert.ok(exactNumerator < (apy + 1n) * denominator);
        }
        assert.ok(apy >= MIN_APY_WAD);
        // Over a whole year the simple rate equals the compound one (up to the floor).
        if (dt === SECONDS_PER_YEAR && apy > MIN_APY_WAD) assert.ok(apy * p0 <= (p1 - p0) * WAD);
      },
    ),
  );
});

test("monotone in the ending price", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 1n, max: 10n ** 30n }),
      fc.bigInt({ min: 0n, max: 10n ** 30n }),
      fc.bigInt({ min: 0n, max: 10n ** 30n }),
      fc.bigInt({ min: 1n, max: 10n ** 8n }),
      (p0, a, b, dt) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        assert.ok(sharePriceApy(p0, lo, dt) <= sharePriceApy(p0, hi, dt));
      },
    ),
  );
});
