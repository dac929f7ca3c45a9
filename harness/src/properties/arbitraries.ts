/**
 * The inputs the properties draw from. Ranges are wider than any real product on purpose: an
 * invariant that holds for 2^256 − 1 base units and a 2000 % APY holds for USDC at 5 %.
 * @module
 */
import { MAX_UINT256, WAD } from "@partner-yield/core/math";
import fc from "fast-check";

/** A principal in base units: mostly up to 10^30, sometimes anywhere up to 2^256 − 1. */
export const principalUnits: fc.Arbitrary<bigint> = fc.oneof(
  { weight: 3, arbitrary: fc.bigInt({ min: 1n, max: 10n ** 30n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: MAX_UINT256 }) },
);

/** A rate (scaled by 10^18) above −100 % and up to +2000 %: mostly within ±50 %. */
export const rateWad: fc.Arbitrary<bigint> = fc.oneof(
  { weight: 3, arbitrary: fc.bigInt({ min: -WAD / 2n, max: WAD / 2n }) },
  { weight: 1, arbitrary: fc.bigInt({ min: -WAD + 1n, max: 20n * WAD }) },
);

/** A rate from 0 to +2000 %. */
export const nonNegativeRateWad: fc.Arbitrary<bigint> = fc.bigInt({ min: 0n, max: 20n * WAD });

/** A strictly positive rate up to +2000 %. */
export const positiveRateWad: fc.Arbitrary<bigint> = fc.bigInt({ min: 1n, max: 20n * WAD });

/** A loss or zero: from just above −100 % to 0. */
export const nonPositiveRateWad: fc.Arbitrary<bigint> = fc.bigInt({ min: -WAD + 1n, max: 0n });

/** Fee pairs a product may have (CONTRACT §2): 0 ≤ s, 0 ≤ p, s + p ≤ 10000. */
export const feePair: fc.Arbitrary<readonly [number, number]> = fc
  .nat(10_000)
  .chain((s) => fc.nat(10_000 - s).map((p) => [s, p] as const));

/** Asset decimals: the common 0, 2, 6, 8, 18 and anything up to 24. */
export const assetDecimals: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, 2, 6, 8, 18),
  fc.integer({ min: 0, max: 24 }),
);

/** Two values in ascending order. */
export function ascendingPair(arbitrary: fc.Arbitrary<bigint>): fc.Arbitrary<readonly [bigint, bigint]> {
  return fc.tuple(arbitrary, arbitrary).map(([x, y]) => (x <= y ? ([x, y] as const) : ([y, x] as const)));
}

/** Vault totals in base units and a decimals offset δ (0 to 18). */
export const vaultState = fc.record({
  totalAssets: fc.bigInt({ min: 0n, max: 10n ** 30n }),
  totalSupply: fc.bigInt({ min: 0n, max: 10n ** 40n }),
  decimalsOffset: fc.integer({ min: 0, max: 18 }),
});

/** A USD price per whole unit, scaled by 10^18: from a millionth of a dollar to 10^6 dollars. */
export const priceWad: fc.Arbitrary<bigint> = fc.bigInt({ min: 10n ** 12n, max: 10n ** 24n });
