/**
 * Exact integer nth root, the primitive behind the monthly growth factor (CONTRACT §2).
 * @module
 */

function bitLength(value: bigint): number {
  return value.toString(2).length;
}

/**
 * The floor of the real nth root of `value`: the largest `r` with `r ** n <= value`.
 * Newton's iteration from above, started at 2^ceil(bits / n), which is never below the root;
 * each step strictly decreases while above the floor root, so it stops exactly there.
 * @throws RangeError when `value` is negative or `n` is not an integer ≥ 1.
 * @example integerNthRoot(2n * 10n ** 36n, 12); // 1059n (= floor(1000 × 2^(1/12)))
 * @example integerNthRoot(80n, 4n); // 2n
 */
export function integerNthRoot(value: bigint, n: bigint | number): bigint {
  if (typeof n === "number" && !Number.isSafeInteger(n)) {
    throw new RangeError(`root degree must be an integer, got ${String(n)}`);
  }
  const degree = BigInt(n);
  if (degree < 1n) throw new RangeError(`root degree must be at least 1, got ${degree}`);
  if (value < 0n) throw new RangeError("cannot take an integer root of a negative number");
  if (value < 2n || degree === 1n) return value;
  const below = degree - 1n;
  // value < 2^bits, so its root is < 2^(bits / n) ≤ 2^ceil(bits / n).
  const bits = BigInt(bitLength(value));
  let x = 1n << ((bits + degree - 1n) / degree);
  for (;;) {
    // AM–GM: y ≥ floor root whatever x is; y < x exactly when x is above the floor root.
    const y = (below * x + value / x ** below) / degree;
    if (y >= x) return x;
    x = y;
  }
}
