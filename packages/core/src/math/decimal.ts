/**
 * Canonical decimals on the wire (CONTRACT §1) and amount validation (CONTRACT §3).
 * Everything is exact: a decimal string becomes a `bigint` of base units and back, never a float.
 * @module
 */
import { accept, type Result, refuse } from "../result.js";

/**
 * The canonical decimal form of every amount, rate and value on the wire (CONTRACT §1).
 * No exponent, no `+`, no leading zeros, no trailing fractional zeros. Use `isCanonicalDecimal`,
 * which also refuses `"-0"` (the regex alone lets it through).
 * @example CANONICAL_DECIMAL.test("1000.5"); // true
 */
export const CANONICAL_DECIMAL: RegExp = /^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/;

/**
 * The largest amount in base units an ERC-20 can hold (CONTRACT §3).
 * @example MAX_UINT256.toString().length; // 78 digits
 */
export const MAX_UINT256: bigint = 2n ** 256n - 1n;

/** Digits of `MAX_UINT256` in base 10 (78): no valid amount has a longer integer part. */
const MAX_UINT256_DIGITS = MAX_UINT256.toString().length;

/** ERC-20 `decimals()` is a uint8. */
const MAX_DECIMALS = 255;

/**
 * Why `parseAmount` refused an amount, in the order the rules are checked (CONTRACT §3).
 * @example const code: AmountRefusal = "too_many_decimals";
 */
export type AmountRefusal =
  | "empty"
  | "too_long"
  | "not_plain_decimal"
  | "leading_zeros"
  | "too_many_decimals"
  | "not_positive"
  | "too_large";

/**
 * Why `parseDecimal` refused a decimal.
 * @example const code: DecimalRefusal = "not_plain_decimal";
 */
export type DecimalRefusal = "not_plain_decimal" | "too_many_decimals";

const PLAIN_AMOUNT = /^[0-9]+(\.[0-9]+)?$/;
const PLAIN_DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

function assertDecimals(decimals: number): void {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new RangeError(`decimals must be an integer from 0 to ${MAX_DECIMALS}, got ${String(decimals)}`);
  }
}

function digitsPhrase(count: number): string {
  return count === 1 ? "1 fractional digit" : `${count} fractional digits`;
}

/**
 * Validates a user-supplied amount (CONTRACT §3) and converts it to base units.
 * Rules, checked in this order: plain ASCII decimal `^(0|[1-9][0-9]*)(\.[0-9]+)?$`, at most
 * `decimals` fractional digits (trailing zeros count, but are fine within the limit), greater
 * than zero, at most 2^256 − 1 base units. The refusal's code and reason name the rule that failed.
 * @throws RangeError when `decimals` is not an integer from 0 to 255 (a bug, not an input).
 * @example parseAmount("1.50", 2); // { ok: true, value: 150n }
 * @example parseAmount("1.5000000", 6, "USDC"); // { ok: false, code: "too_many_decimals", reason: "amount has 7 fractional digits; USDC allows at most 6" }
 */
export function parseAmount(input: string, decimals: number, symbol?: string): Result<bigint, AmountRefusal> {
  assertDecimals(decimals);
  const asset = symbol ?? "the asset";
  if (input.length === 0) return refuse("empty", "amount must not be empty");
  // Longest valid amount: 78 integer digits, a point and `decimals` fractional digits. Refusing
  // longer input up front bounds the work done on hostile strings.
  const maxLength = MAX_UINT256_DIGITS + 1 + decimals;
  if (input.length > maxLength) {
    return refuse(
      "too_long",
      `amount is too long: ${input.length} characters, at most ${maxLength} for ${asset}`,
    );
  }
  if (!PLAIN_AMOUNT.test(input)) {
    return refuse(
      "not_plain_decimal",
      "amount must be a plain decimal number like 1000.5 (no sign, exponent, spaces or separators)",
    );
  }
  const point = input.indexOf(".");
  const integerPart = point === -1 ? input : input.slice(0, point);
  const fractionPart = point === -1 ? "" : input.slice(point + 1);
  if (integerPart.length > 1 && integerPart.startsWith("0")) {
    return refuse("leading_zeros", "amount must not have leading zeros");
  }
  if (fractionPart.length > decimals) {
    const allowed = decimals === 0 ? "no fractional digits" : `at most ${decimals}`;
    return refuse(
      "too_many_decimals",
      `amount has ${digitsPhrase(fractionPart.length)}; ${asset} allows ${allowed}`,
    );
  }
  const units = BigInt(integerPart + fractionPart.padEnd(decimals, "0"));
  if (units === 0n) return refuse("not_positive", "amount must be greater than zero");
  if (units > MAX_UINT256) return refuse("too_large", "amount exceeds the maximum of 2^256 − 1 base units");
  return accept(units);
}

/**
 * Formats base units as a canonical decimal with `decimals` places (CONTRACT §1): trailing
 * fractional zeros dropped, never `-0`.
 * @example formatUnits(1_500_000n, 6); // "1.5"
 * @example formatUnits(-5n, 2); // "-0.05"
 */
export function formatUnits(units: bigint, decimals: number): string {
  assertDecimals(decimals);
  const sign = units < 0n ? "-" : "";
  const digits = (units < 0n ? -units : units).toString();
  if (decimals === 0) return sign + digits;
  const padded = digits.padStart(decimals + 1, "0");
  const integerPart = padded.slice(0, padded.length - decimals);
  let end = padded.length;
  while (end > integerPart.length && padded.charCodeAt(end - 1) === 48 /* "0" */) end--;
  const fractionPart = padded.slice(integerPart.length, end);
  return sign + integerPart + (fractionPart === "" ? "" : "." + fractionPart);
}

/**
 * Parses a plain decimal (optional leading `-`, ASCII digits, optional fraction with at most
 * `decimals` digits; leading and trailing zeros tolerated) into a `bigint` scaled by 10^decimals.
 * For data files and responses (rates, prices, totals); user amounts go through `parseAmount`.
 * @throws RangeError when `decimals` is not an integer from 0 to 255 (a bug, not an input).
 * @example parseDecimal("0.0523", 18); // { ok: true, value: 52_300_000_000_000_000n }
 * @example parseDecimal("-1.5", 2); // { ok: true, value: -150n }
 * @example parseDecimal("1e3", 2); // { ok: false, code: "not_plain_decimal", reason: … }
 */
export function parseDecimal(text: string, decimals: number): Result<bigint, DecimalRefusal> {
  assertDecimals(decimals);
  if (!PLAIN_DECIMAL.test(text)) {
    return refuse("not_plain_decimal", `not a plain decimal number: ${JSON.stringify(text.slice(0, 80))}`);
  }
  const negative = text.startsWith("-");
  const body = negative ? text.slice(1) : text;
  const point = body.indexOf(".");
  const integerPart = point === -1 ? body : body.slice(0, point);
  const fractionPart = point === -1 ? "" : body.slice(point + 1);
  if (fractionPart.length > decimals) {
    return refuse(
      "too_many_decimals",
      `decimal ${JSON.stringify(text.slice(0, 80))} has ${digitsPhrase(fractionPart.length)}; at most ${decimals} allowed`,
    );
  }
  const magnitude = BigInt(integerPart + fractionPart.padEnd(decimals, "0"));
  return accept(negative ? -magnitude : magnitude);
}

/**
 * True when `text` is a canonical decimal (CONTRACT §1), `"-0"` excluded.
 * @example isCanonicalDecimal("1.5"); // true
 * @example isCanonicalDecimal("1.50"); // false
 */
export function isCanonicalDecimal(text: string): boolean {
  return text !== "-0" && CANONICAL_DECIMAL.test(text);
}
