/**
 * How core reports an invalid input: every function that checks data from outside (a request, a
 * fixture file, a header) returns a `Result` and never throws for bad input. A refusal has a stable
 * `code` (snake_case, for programs and tests) and a `reason` (one sentence a human can act on).
 *
 * A thrown `RangeError` means something else: a broken precondition of a computation on values
 * that were already checked (a negative `decimals`, fees over 10000 bps passed to `netApy`), i.e.
 * a bug in the caller, never an input to refuse.
 * @module
 */

/**
 * The outcome of checking an input: the value, or a refusal with its code and reason.
 * @example
 * const amount = parseAmount("1.50", 6);
 * if (amount.ok) amount.value; // 1_500_000n
 * else amount.reason; // e.g. "amount must be greater than zero"
 */
export type Result<T, Code extends string = string> = Accepted<T> | Refused<Code>;

/** The input was valid; `value` is what it means. */
export interface Accepted<T> {
  readonly ok: true;
  readonly value: T;
}

/** The input was refused: `code` says which rule failed, `reason` says it to a human. */
export interface Refused<Code extends string = string> {
  readonly ok: false;
  readonly code: Code;
  readonly reason: string;
}

/**
 * @example accept(150n); // { ok: true, value: 150n }
 */
export function accept<T>(value: T): Accepted<T> {
  return { ok: true, value };
}

/**
 * @example refuse("not_positive", "amount must be greater than zero");
 */
export function refuse<Code extends string>(code: Code, reason: string): Refused<Code> {
  return { ok: false, code, reason };
}

/**
 * The value of a result the caller already trusts (test data, a response it validated): a refusal
 * there is a broken precondition, thrown as a `RangeError` naming the code and reason.
 * @example unwrap(parseDecimal("0.0523", 18)); // 52_300_000_000_000_000n
 */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw new RangeError(`${result.code}: ${result.reason}`);
}
