/**
 * Exact arithmetic on decimal strings as a target sends them, for the level-`spec` checks that
 * cannot assume the canonical form of CONTRACT §1. Never a float.
 * @module
 */

/**
 * interface.md's "string (decimal number)", read as loosely as the words allow: an optional sign,
 * digits with an optional point and fraction (`5.`, `.5` included); no exponent, no separators.
 */
export const DECIMAL_TEXT = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/;

/** A decimal as an integer over 10^scale. */
export interface Scaled {
  readonly units: bigint;
  readonly scale: number;
}

export function isDecimalText(value: unknown): value is string {
  return typeof value === "string" && DECIMAL_TEXT.test(value);
}

/** Fractional digits written, trailing zeros included. */
export function fractionDigits(text: string): number {
  const point = text.indexOf(".");
  return point === -1 ? 0 : text.length - point - 1;
}

/** @example toScaled("-1.50"); // { units: -150n, scale: 2 } */
export function toScaled(text: string): Scaled {
  if (!DECIMAL_TEXT.test(text)) throw new RangeError(`not a decimal number: ${JSON.stringify(text)}`);
  const negative = text.startsWith("-");
  const body = /^[+-]/.test(text) ? text.slice(1) : text;
  const point = body.indexOf(".");
  const digits = point === -1 ? body : body.slice(0, point) + body.slice(point + 1);
  const units = BigInt(digits === "" ? "0" : digits);
  return { units: negative ? -units : units, scale: point === -1 ? 0 : body.length - point - 1 };
}

/**
 * One unit of the last digit a figure shows, or of the asset (10^−decimals), whichever is coarser:
 * the rounding a figure may carry when its precision is not shown.
 * @example writtenUnit("51.52", 6); // { units: 1n, scale: 2 }
 */
export function writtenUnit(text: string, decimals: number): Scaled {
  return unit(Math.min(fractionDigits(text), decimals));
}

/** `value` rescaled to `scale` digits (scale must not shrink it). */
export function rescale(value: Scaled, scale: number): bigint {
  if (scale < value.scale) throw new RangeError("rescale cannot drop digits");
  return value.units * 10n ** BigInt(scale - value.scale);
}

export function multiply(a: Scaled, b: Scaled): Scaled {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** Sign of a − b: −1, 0 or 1. */
export function compareScaled(a: Scaled, b: Scaled): number {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a, scale);
  const y = rescale(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** |a − b| as a Scaled. */
export function distance(a: Scaled, b: Scaled): Scaled {
  const scale = Math.max(a.scale, b.scale);
  const d = rescale(a, scale) - rescale(b, scale);
  return { units: d < 0n ? -d : d, scale };
}

/** One unit at `decimals` fractional digits: 10^−decimals. */
export function unit(decimals: number): Scaled {
  return { units: 1n, scale: decimals };
}

export function add(a: Scaled, b: Scaled): Scaled {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

export function times(a: Scaled, k: bigint): Scaled {
  return { units: a.units * k, scale: a.scale };
}
