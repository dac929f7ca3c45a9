/**
 * The underlying APY from the change of a vault's share price between two blocks (docs/math.md,
 * "Underlying APY from chain"). Exact integer arithmetic; rates are fractions scaled by 10^18.
 * @module
 */
import { floorDiv, WAD } from "@partner-yield/core/math";

/** 365 days of 86 400 s: the year the rate is annualised over. */
export const SECONDS_PER_YEAR = 31_536_000n;

/** The lowest rate reported: just above −100 %, the floor of CONTRACT §2's monthly root. */
export const MIN_APY_WAD: bigint = -WAD + 1n;

/**
 * Shares whose value is read as the share price: one whole share times 10^18, so the price keeps
 * 18 more digits than one share's value would (`convertToAssets` is linear in the shares).
 * @example sharePriceProbe(18); // 10n ** 36n
 */
export function sharePriceProbe(shareDecimals: number): bigint {
  if (!Number.isInteger(shareDecimals) || shareDecimals < 0 || shareDecimals > 36)
    throw new RangeError(`share decimals must be an integer from 0 to 36, got ${String(shareDecimals)}`);
  return 10n ** BigInt(shareDecimals) * WAD;
}

/**
 * Simple annualisation of the share-price change, rounded toward −∞:
 *   apy = floor((p1 − p0) × SECONDS_PER_YEAR × 10^18 / (p0 × (t1 − t0)))
 * bounded below by MIN_APY_WAD. For windows up to a year it never exceeds the compound rate
 * (p1/p0)^(year/Δt) − 1 (Bernoulli's inequality), so the figure never overstates the yield.
 * @throws RangeError unless p0 > 0, p1 ≥ 0 and t1 > t0.
 * @example sharePriceApy(10n ** 24n, 10n ** 24n + 10n ** 20n, 86_400n); // 36_500_000_000_000_000n (0.0365)
 */
export function sharePriceApy(priceStart: bigint, priceEnd: bigint, elapsedSeconds: bigint): bigint {
  if (priceStart <= 0n) throw new RangeError("the starting share price must be positive");
  if (priceEnd < 0n) throw new RangeError("the ending share price must not be negative");
  if (elapsedSeconds <= 0n) throw new RangeError("the two blocks must be at least one second apart");
  const apy = floorDiv((priceEnd - priceStart) * SECONDS_PER_YEAR * WAD, priceStart * elapsedSeconds);
  return apy < MIN_APY_WAD ? MIN_APY_WAD : apy;
}
