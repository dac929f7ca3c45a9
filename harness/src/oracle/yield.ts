/**
 * The expected yield figures of CONTRACT §2, recomputed by the harness's own route:
 *
 * - net APY as `a − ceil(a × f / 10000)` for a gain (the same number as the contract's
 *   truncated `a × (10000 − f) / 10000`, reached the other way round), `a` for a loss;
 * - the monthly growth factor `R` built bit by bit from its defining bounds
 *   `R^12 ≤ S^12 × (1 + n) < (R + 1)^12` (no Newton iteration, no cache);
 * - amounts parsed and formatted by `decimal.ts`, never by the core.
 *
 * The conformance checks compare a deployment's answers with these; a test compares these with
 * the core on generated cases and the published vectors, so a bug in either shows.
 * @module
 */
import { floorQuotient, fromBaseUnits, toBaseUnits } from "./decimal.js";

/** Rates carry 18 fractional digits (CONTRACT §1). */
export const RATE_DIGITS = 18;
const ONE = 10n ** 18n;
/** `S` of CONTRACT §2. */
export const MONTHLY_SCALE = 10n ** 36n;
/** S^12 / 10^18, an integer: S^12 × (1 + n) = SCALED_ONE × (10^18 + n) for n in units of 10^−18. */
const SCALED_ONE = 10n ** (36n * 12n - 18n);

/** A product's terms as the product list shows them. */
export interface ProductTerms {
  readonly assetDecimals: number;
  /** `underlying_apy` as written, e.g. "0.0523". */
  readonly underlyingApy: string;
  readonly serviceFeeBps: number;
  readonly partnerFeeBps: number;
}

/** The four figures of a yield calculation, as canonical decimal text. */
export interface ExpectedQuote {
  readonly principal: string;
  readonly annual_yield: string;
  readonly monthly_yield: string;
  readonly net_apy_for_user: string;
}

/**
 * net_apy_for_user in units of 10^−18 (CONTRACT §2: performance fees, nothing taken on a loss).
 * @throws RangeError for fees outside 0 ≤ s, 0 ≤ p, s + p ≤ 10000, or a rate with more than 18 digits.
 * @example netApyUnits("0.0523", 50, 100); // 51_515_500_000_000_000n (0.0515155)
 */
export function netApyUnits(underlyingApy: string, serviceFeeBps: number, partnerFeeBps: number): bigint {
  for (const fee of [serviceFeeBps, partnerFeeBps]) {
    if (!Number.isInteger(fee) || fee < 0) throw new RangeError(`a fee of ${fee} bps is not a fee`);
  }
  const fees = BigInt(serviceFeeBps + partnerFeeBps);
  if (fees > 10_000n) throw new RangeError(`fees of ${fees} bps exceed 100 %`);
  const a = toBaseUnits(underlyingApy, RATE_DIGITS);
  if (a <= 0n) return a;
  // The fee is a share of a gain, rounded up, so the user's rate is the truncated remainder.
  return a - (a * fees + 9_999n) / 10_000n;
}

/**
 * R: the largest integer with R^12 ≤ S^12 × (1 + n), found one bit at a time from the top.
 * @throws RangeError when 1 + n ≤ 0 (no monthly equivalent of a total loss).
 * @example monthlyFactor(0n) === MONTHLY_SCALE; // true
 */
export function monthlyFactor(netUnits: bigint): bigint {
  const target = SCALED_ONE * (ONE + netUnits);
  if (target <= 0n) throw new RangeError("a monthly factor needs 1 + n > 0");
  // R^12 ≤ target < 2^bits, so R < 2^ceil(bits / 12).
  const bits = target.toString(2).length;
  let root = 0n;
  for (let bit = Math.ceil(bits / 12); bit >= 0; bit--) {
    const candidate = root | (1n << BigInt(bit));
    if (twelfthPower(candidate) <= target) root = candidate;
  }
  return root;
}

/** True when R satisfies the defining bounds of CONTRACT §2 for n. */
export function isMonthlyFactor(root: bigint, netUnits: bigint): boolean {
  const target = SCALED_ONE * (ONE + netUnits);
  return root >= 0n && twelfthPower(root) <= target && target < twelfthPower(root + 1n);
}

function twelfthPower(x: bigint): bigint {
  const square = x * x;
  const fourth = square * square;
  return fourth * fourth * fourth;
}

/**
 * annual and monthly yield in base units for a principal in base units at net APY `netUnits`
 * (10^−18); `factor` is the monthly growth factor R, computed when not given.
 * @example yieldUnits(1_000_000_000n, 5n * 10n ** 16n); // { annual: 50_000_000n, monthly: 4_074_123n }
 */
export function yieldUnits(
  principalUnits: bigint,
  netUnits: bigint,
  factor: bigint = monthlyFactor(netUnits),
): { annual: bigint; monthly: bigint } {
  return {
    annual: floorQuotient(principalUnits * netUnits, ONE),
    monthly: floorQuotient(principalUnits * (factor - MONTHLY_SCALE), MONTHLY_SCALE),
  };
}

/**
 * What a yield calculation must answer for `amount` (CONTRACT §2).
 * @example expectedQuote("1000", { assetDecimals: 6, underlyingApy: "0.05", serviceFeeBps: 0, partnerFeeBps: 0 });
 * // { principal: "1000", annual_yield: "50", monthly_yield: "4.074123", net_apy_for_user: "0.05" }
 */
export function expectedQuote(amount: string, terms: ProductTerms): ExpectedQuote {
  const d = terms.assetDecimals;
  const principal = toBaseUnits(amount, d);
  const net = netApyUnits(terms.underlyingApy, terms.serviceFeeBps, terms.partnerFeeBps);
  const { annual, monthly } = yieldUnits(principal, net);
  return {
    principal: fromBaseUnits(principal, d),
    annual_yield: fromBaseUnits(annual, d),
    monthly_yield: fromBaseUnits(monthly, d),
    net_apy_for_user: fromBaseUnits(net, RATE_DIGITS),
  };
}
