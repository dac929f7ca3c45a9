/**
 * The one seam between the core and a store's answer: a port method on the request path returns
 * its value, or a promise of it. A store that has the answer at hand (the in-memory ones, a durable
 * store's read cache on a hit) returns it as it is; any other returns a promise (or any thenable).
 * The core awaits only a promise: `await` of a plain value still suspends the request's frame for a
 * microtask turn, which is the cost a store answering at once should not pay (docs/performance.md).
 * @module
 */

/**
 * A value, or a promise (or other thenable) of it: what a store port method on the request path
 * returns. A method declared `async`, or returning `Promise<T>`, is one.
 * @example
 * class MyKeyStore implements KeyStore {
 *   findByHash(keyHash: string): MaybePromise<ApiKeyRecord | undefined> {
 *     return this.#cache.get(keyHash) ?? this.#query(keyHash); // a value on a hit, a promise otherwise
 *   }
 * }
 */
export type MaybePromise<T> = T | PromiseLike<T>;

/**
 * Whether a store's answer must be awaited: a promise, or any object or function with a `then`
 * method (the thenables `await` itself follows).
 * @example const record = keys.findByHash(hash); const found = isPromiseLike(record) ? await record : record;
 */
export function isPromiseLike<T>(answer: MaybePromise<T>): answer is PromiseLike<T> {
  return typeof (answer as AnyAnswer)?.then === "function";
}

/** Any answer, as far as its `then` goes: what a call site reads `then` of (`awaits`). */
export type AnyAnswer = { readonly then?: unknown } | null | undefined;

/**
 * `isPromiseLike` for the request path, given the answer's `then` as its call site read it. V8
 * keeps what a property load has seen per place in the code: a load in one shared function sees
 * every store's answer (a key record, a partner, a decision, a product, …) and goes the slow,
 * generic way, where a load at each call site sees one shape and costs next to nothing. The core
 * calls this on every store answer of a request (docs/performance.md).
 * @example
 * const asked = keys.findByHash(hash);
 * const record = awaits(asked, (asked as AnyAnswer)?.then) ? await asked : asked;
 */
export function awaits<T>(answer: MaybePromise<T>, then: unknown): answer is PromiseLike<T> {
  return typeof then === "function";
}
