/**
 * Summary statistics the benchmarks print.
 * @module
 */

/** The median of `xs` (the mean of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * `median (lowest<dash>highest)` of `xs`, each formatted by `format`: a round's figure with how far
 * the rounds spread.
 * @example spread([3, 1, 2], (x) => x.toFixed(2), "–"); // "2.00 (1.00–3.00)"
 */
export function spread(xs: readonly number[], format: (x: number) => string, dash = "-"): string {
  return `${format(median(xs))} (${format(Math.min(...xs))}${dash}${format(Math.max(...xs))})`;
}
