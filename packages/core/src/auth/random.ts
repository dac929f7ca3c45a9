/**
 * The platform's cryptographic random source: Web Crypto, present in every runtime core supports.
 * Key and secret generators take a `random` argument defaulting to it, so tests can fix the bytes.
 * @example systemRandom(32).length; // 32
 */
export function systemRandom(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}
