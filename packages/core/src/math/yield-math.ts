/**
 * The yield math auditors check (CONTRACT §2). Exact integer fixed point throughout:
 * amounts are base units, rates are fractions scaled by 10^18 (WAD), all `bigint`.
 * @module
 */
import { formatUnits } from "./decimal.js";
import { integerNthRoot } from "./integer-root.js";

/**
 * Fractional digits of every rate on the wire (CONTRACT §1).
 * @example formatUnits(45n * 10n ** 15n, RATE_DECIMALS); // "0.045"
 */
export const RATE_DECIMALS = 18;

/**
 * One, as a rate: rates are fractions scaled by 10^18, so `WAD / 20n` is 5 %.
 * @example annualYield(1000n, WAD / 20n); // 50n
 */
export const WAD: bigint = 10n ** 18n;

/**
 * `S` of CONTRACT §2: the scale of the monthly growth factor `R = floor(S × (1 + n)^(1/12))`.
 * @example monthlyGrowthFactor(0n) === ROOT_SCALE; // true
 */
export const ROOT_SCALE: bigint = 10n ** 36n;

/** S^12 / WAD = 10^(432 − 18), exact, so S^12 × (1 + n) = S12_OVER_WAD × (WAD + n) in integers. */
const S12_OVER_WAD = ROOT_SCALE ** 12n / WAD;

const BPS_DENOMINATOR = 10_000;

/** 10^0 … 10^255: every exponent a decimals count (a uint8) or a decimals offset can take. */
const POWERS_OF_TEN: readonly bigint[] = Array.from({ length: 256 }, (_, k) => 10n ** BigInt(k));

function powerOfTen(k: number): bigint {
  return POWERS_OF_TEN[k] ?? 10n ** BigInt(k);
}

/**
 * Division rounded toward −∞ (BigInt `/` truncates toward zero, which rounds losses up).
 * @throws RangeError on division by zero.
 * @example floorDiv(-7n, 2n); // -4n (while -7n / 2n is -3n)
 */
export function floorDiv(a: bigint, b: bigint): bigint {
  // Both signs known non-negative (every quote and value of a holding): truncation is the floor,
  // and one division is enough.
  if (b > 0n && a >= 0n) return a / b;
  if (b === 0n) throw new RangeError("division by zero");
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function assertBps(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(
      `${name} must be a non-negative integer number of basis points, got ${String(value)}`,
    );
  }
}

/**
 * Net APY for the user (CONTRACT §2): fees are performance fees, a share of a positive yield;
 * a loss (a ≤ 0) passes through unchanged. Truncated toward zero at 18 digits.
 * @throws RangeError unless 0 ≤ service, 0 ≤ partner, service + partner ≤ 10000 (integers).
 * @example netApy(WAD / 20n, 500, 500); // 45_000_000_000_000_000n (0.05 → 0.045)
 */
export function netApy(underlyingApy: bigint, serviceFeeBps: number, partnerFeeBps: number): bigint {
  assertBps("service_fee_bps", serviceFeeBps);
  assertBps("partner_fee_bps", partnerFeeBps);
  const totalFee = serviceFeeBps + partnerFeeBps;
  if (totalFee > BPS_DENOMINATOR) {
    throw new RangeError(`service_fee_bps + partner_fee_bps must be at most 10000, got ${totalFee}`);
  }
  if (underlyingApy <= 0n) return underlyingApy;
  // Positive numerator and denominator: truncation is the floor.
  return (underlyingApy * BigInt(BPS_DENOMINATOR - totalFee)) / BigInt(BPS_DENOMINATOR);
}

/**
 * annual_yield = floor(P × n) in base units (CONTRACT §2): never overstates, and a loss is
 * rounded toward −∞ too.
 * @example annualYield(1_000_000_000n, 45n * 10n ** 15n); // 45_000_000n (1000 USDC at 4.5 %)
 */
export function annualYield(principalUnits: bigint, netApyWad: bigint): bigint {
  return floorDiv(principalUnits * netApyWad, WAD);
}

/**
 * R = floor(S × (1 + n)^(1/12)) with S = 10^36 (CONTRACT §2), computed exactly as the integer
 * 12th root of S^12 × (WAD + n) / WAD.
 * @throws RangeError when n ≤ −1 (a total loss or worse has no monthly equivalent).
 * @example monthlyGrowthFactor(WAD); // 1059463094359295264561825294946341700n = floor(10^36 × 2^(1/12))
 */
export function monthlyGrowthFactor(netApyWad: bigint): bigint {
  const cached = growthFactors.get(netApyWad);
  if (cached !== undefined) return cached;
  const onePlusN = WAD + netApyWad;
  if (onePlusN <= 0n) throw new RangeError("net APY must be greater than -1 for a monthly growth factor");
  const factor = integerNthRoot(S12_OVER_WAD * onePlusN, 12);
  // A product's rate changes rarely and the root of a 430-digit integer dominates a quote:
  // remember the last few (a pure function of its argument, so caching cannot change a result).
  if (growthFactors.size >= GROWTH_FACTOR_CACHE_SIZE) growthFactors.clear();
  growthFactors.set(netApyWad, factor);
  return factor;
}

const GROWTH_FACTOR_CACHE_SIZE = 1024;
const growthFactors = new Map<bigint, bigint>();

/**
 * monthly_yield = floor(P × (R − S) / S) in base units (CONTRACT §2): the compound monthly
 * equivalent of the APY, not APY / 12.
 * @example monthlyYield(1_000_000_000n, WAD / 20n); // 4_074_123n (1000 USDC at 5 % → 4.074123)
 */
export function monthlyYield(principalUnits: bigint, netApyWad: bigint): bigint {
  return floorDiv(principalUnits * (monthlyGrowthFactor(netApyWad) - ROOT_SCALE), ROOT_SCALE);
}

function assertNonNegative(name: string, value: bigint): void {
  if (value < 0n) throw new RangeError(`${name} must not be negative`);
}

/**
 * ERC-4626 `convertToAssets` with OpenZeppelin's virtual shares (CONTRACT §2):
 * floor(shares × (totalAssets + 1) / (totalSupply + 10^δ)), all in base units.
 * @throws RangeError on a negative quantity or a δ that is not an integer from 0 to 77.
 * @example convertToAssets(10n ** 18n, 1_000_000n, 10n ** 18n, 12); // 1_000_000n
 */
export function convertToAssets(
  shares: bigint,
  totalAssets: bigint,
  totalSupply: bigint,
  decimalsOffset: number,
): bigint {
  if (!Number.isInteger(decimalsOffset) || decimalsOffset < 0 || decimalsOffset > 77) {
    throw new RangeError(`decimals offset must be an integer from 0 to 77, got ${String(decimalsOffset)}`);
  }
  assertNonNegative("shares", shares);
  assertNonNegative("total_assets", totalAssets);
  assertNonNegative("total_supply", totalSupply);
  return (shares * (totalAssets + 1n)) / (totalSupply + powerOfTen(decimalsOffset));
}

/**
 * usd_value in cents = floor(assets × price_usd) at 2 fractional digits (CONTRACT §2).
 * Format with `formatUnits(cents, 2)`.
 * @example usdValueCents(1_234_567n, 6, 999_900_000_000_000_000n); // 123n ("1.23" for 1.234567 USDC at $0.9999)
 */
export function usdValueCents(assetsUnits: bigint, assetDecimals: number, priceUsdWad: bigint): bigint {
  if (!Number.isInteger(assetDecimals) || assetDecimals < 0) {
    throw new RangeError(`asset decimals must be a non-negative integer, got ${String(assetDecimals)}`);
  }
  return floorDiv(assetsUnits * priceUsdWad * 100n, powerOfTen(assetDecimals) * WAD);
}

/**
 * The yield-calc response body fields (CONTRACT §2), every one a canonical decimal string.
 * @example const q: YieldQuote = { principal: "1000", annual_yield: "50", monthly_yield: "4.074123", net_apy_for_user: "0.05" };
 */
export interface YieldQuote {
  principal: string;
  annual_yield: string;
  monthly_yield: string;
  net_apy_for_user: string;
}

/** What `quoteYield` needs: a validated amount in base units and the product's terms. */
export interface QuoteInput {
  readonly amountUnits: bigint;
  readonly assetDecimals: number;
  /** underlying_apy as a fraction scaled by 10^18. */
  readonly underlyingApyWad: bigint;
  readonly serviceFeeBps: number;
  readonly partnerFeeBps: number;
}

/**
 * Computes a yield quote from a validated amount (base units) and a product's terms (CONTRACT §2).
 * @example
 * quoteYield({ amountUnits: 1_000_000_000n, assetDecimals: 6, underlyingApyWad: WAD / 20n, serviceFeeBps: 500, partnerFeeBps: 500 });
 * // { principal: "1000", annual_yield: "45", monthly_yield: "3.674809", net_apy_for_user: "0.045" }
 */
export function quoteYield(input: QuoteInput): YieldQuote {
  const net = netApy(input.underlyingApyWad, input.serviceFeeBps, input.partnerFeeBps);
  return {
    principal: formatUnits(input.amountUnits, input.assetDecimals),
    annual_yield: formatUnits(annualYield(input.amountUnits, net), input.assetDecimals),
    monthly_yield: formatUnits(monthlyYield(input.amountUnits, net), input.assetDecimals),
    net_apy_for_user: formatUnits(net, RATE_DECIMALS),
  };
}
