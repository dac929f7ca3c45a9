/**
 * Decimal text and base units, written for the oracle without the core's parser or formatter:
 * the digits are split at the point and scaled by powers of ten; formatting divides by 10^D.
 * @module
 */

/** interface.md's "string (decimal number)": an optional sign, digits, an optional fraction. */
const DECIMAL = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/;

/** 2^256 − 1: the most base units an amount may hold (CONTRACT §3). */
export const MAX_BASE_UNITS = (1n << 256n) - 1n;

/**
 * `text` as an integer count of 10^−decimals. Trailing fractional zeros beyond `decimals` are
 * dropped; a significant digit beyond them throws (the value is not representable).
 * @throws RangeError when `text` is not a decimal number or needs more than `decimals` digits.
 * @example toBaseUnits("1000.5", 6); // 1_000_500_000n
 * @example toBaseUnits("-0.0125", 18); // -12_500_000_000_000_000n
 */
export function toBaseUnits(text: string, decimals: number): bigint {
  const match = DECIMAL.exec(text);
  const whole = match?.[2] ?? "";
  const fraction = (match?.[3] ?? "").replace(/0+$/, "");
  if (match === null || (whole === "" && (match[3] ?? "") === "")) {
    throw new RangeError(`not a decimal number: ${JSON.stringify(text.slice(0, 60))}`);
  }
  if (fraction.length > decimals) {
    throw new RangeError(`${text} has more than ${decimals} significant fractional digits`);
  }
  const scale = 10n ** BigInt(decimals);
  const magnitude =
    BigInt(whole === "" ? "0" : whole) * scale +
    (fraction === "" ? 0n : BigInt(fraction) * 10n ** BigInt(decimals - fraction.length));
  return match[1] === "-" ? -magnitude : magnitude;
}

/**
 * Base units as canonical decimal text (CONTRACT §1): no exponent, no trailing fractional zero,
 * never "-0".
 * @example fromBaseUnits(1_000_500_000n, 6); // "1000.5"
 * @example fromBaseUnits(-1n, 6); // "-0.000001"
 */
export function fromBaseUnits(units: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const magnitude = units < 0n ? -units : units;
  const whole = magnitude / scale;
  const rest = magnitude % scale;
  const sign = units < 0n ? "-" : "";
  if (rest === 0n) return `${sign}${whole}`;
  const fraction = rest.toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${sign}${whole}.${fraction}`;
}

/**
 * CONTRACT §1's canonical form, checked on its own terms (the regular expression, and never -0).
 * @example isCanonical("0.0523"); // true
 * @example isCanonical("0.05230"); // false
 */
export function isCanonical(text: unknown): text is string {
  return typeof text === "string" && /^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/.test(text) && text !== "-0";
}

/**
 * Division rounded toward −∞ for a positive divisor (BigInt `/` rounds toward zero).
 * @example floorQuotient(-7n, 2n); // -4n
 */
export function floorQuotient(dividend: bigint, divisor: bigint): bigint {
  if (divisor <= 0n) throw new RangeError("floorQuotient needs a positive divisor");
  if (dividend >= 0n) return dividend / divisor;
  return -((-dividend + divisor - 1n) / divisor);
}
