/**
 * A bounded cache of API key → its stored hash (`ApiKeyFormat.hash`), for authentication on every
 * request: checking the key's shape (ours: a CRC-32 in base62) and hashing it cost more than the
 * rest of the lookup. Only the hash is cached, never a verdict: the key store is asked for the
 * hash's record on every request, so a revoked or deleted key is refused on its next request. The
 * API holds the hash as the accepted `Result` its authentication step returns (`V`), so a hit
 * allocates nothing.
 * @module
 */

/** Least recently used goes first; at most `max` keys. */
export class KeyHashCache<V = string> {
  readonly #entries = new Map<string, V>();
  readonly #max: number;
  /** The most recently used key: asked again, it needs no reordering (the usual keep-alive case). */
  #newest: string | undefined;

  constructor(max = 1024) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError("max must be a positive integer");
    this.#max = max;
  }

  get(key: string): V | undefined {
    const entries = this.#entries;
    const hash = entries.get(key);
    if (hash !== undefined && key !== this.#newest) {
      this.#newest = key;
      // Most recently used goes last (a Map iterates in insertion order).
      entries.delete(key);
      entries.set(key, hash);
    }
    return hash;
  }

  set(key: string, hash: V): void {
    const entries = this.#entries;
    // The key goes last, as the most recently used; a new one takes the least recent one's place.
    if (entries.has(key)) entries.delete(key);
    else if (entries.size >= this.#max) entries.delete(entries.keys().next().value as string);
    entries.set(key, hash);
    this.#newest = key;
  }

  get size(): number {
    return this.#entries.size;
  }
}
