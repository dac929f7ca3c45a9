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
 * method (the thenables `await` itself follows). A native promise is told by its class first.
 * @example const record = keys.findByHash(hash); const found = isPromiseLike(record) ? await record : record;
 */
export function isPromiseLike<T>(answer: MaybePromise<T>): answer is PromiseLike<T> {
  return (
    answer instanceof Promise ||
    (((typeof answer === "object" && answer !== null) || typeof answer === "function") &&
      typeof (answer as { then?: unknown }).then === "function")
  );
}
