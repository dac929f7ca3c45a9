/**
 * One kind of row in the read cache (keys, partners, products, …): answers found and answers of
 * "no such row", each in a Map bounded by its own size (the oldest entry leaves first), so a flood
 * of unknown keys cannot push out the known ones and nothing grows without limit. Its generation
 * counts the invalidations: a read-through captures it before its query and stores the row only
 * if no invalidation came in between, so a change notified while the query was in flight is never
 * overwritten by the older row the query read.
 */

/** When the cache may be used: until `until` (ms since the epoch); 0 while it is distrusted. */
export interface CacheTrust {
  until: number;
}

/**
 * @example
 * const keys = new CacheTable<KeyEntry>("keys", 100_000, 10_000, trust);
 * const hit = keys.get(hash); // the entry, null (known absent) or undefined (ask the database)
 * const generation = keys.generation; // … query …
 * keys.fill(hash, row ?? null, generation);
 */
export class CacheTable<V> {
  readonly name: string;
  readonly #maxFound: number;
  readonly #maxAbsent: number;
  readonly #trust: CacheTrust;
  readonly #found = new Map<string, V>();
  readonly #absent = new Set<string>();
  #generation = 0;
  /** Lookups answered from the table (a value or a known absence), and sent to the database. */
  hits = 0;
  misses = 0;

  constructor(name: string, maxFound: number, maxAbsent: number, trust: CacheTrust) {
    if (!(Number.isInteger(maxFound) && maxFound >= 0 && Number.isInteger(maxAbsent) && maxAbsent >= 0))
      throw new RangeError(`${name}: the bounds of a cache table are whole numbers >= 0`);
    this.name = name;
    this.#maxFound = maxFound;
    this.#maxAbsent = maxAbsent;
    this.#trust = trust;
  }

  /**
   * The cached answer: the value, null when the row is known not to exist, undefined when the
   * database must be asked (not cached, or the cache is not trusted now).
   */
  get(key: string): V | null | undefined {
    if (Date.now() >= this.#trust.until) {
      this.misses++;
      return undefined;
    }
    const value = this.#found.get(key);
    if (value !== undefined) {
      this.hits++;
      return value;
    }
    if (this.#absent.has(key)) {
      this.hits++;
      return null;
    }
    this.misses++;
    return undefined;
  }

  /** Invalidations so far; capture it before a read-through's query and pass it to `fill`. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Stores what a read-through found (null: no row), unless an invalidation came since `generation`
   * was captured or the cache is not trusted now.
   */
  fill(key: string, value: V | null, generation: number): void {
    if (generation !== this.#generation || Date.now() >= this.#trust.until) return;
    if (value === null) {
      if (this.#maxAbsent === 0) return;
      this.#found.delete(key);
      this.#absent.add(key);
      if (this.#absent.size > this.#maxAbsent) this.#absent.delete(this.#absent.values().next().value!);
    } else {
      if (this.#maxFound === 0) return;
      this.#absent.delete(key);
      this.#found.delete(key);
      this.#found.set(key, value);
      if (this.#found.size > this.#maxFound) this.#found.delete(this.#found.keys().next().value!);
    }
  }

  /** Drops one key's answer and ends every read-through in flight (they will not store). */
  invalidate(key: string): void {
    this.#generation++;
    this.#found.delete(key);
    this.#absent.delete(key);
  }

  /** Drops every answer and ends every read-through in flight. */
  clear(): void {
    this.#generation++;
    this.#found.clear();
    this.#absent.clear();
  }

  /** Entries held: answers found and answers of no such row. */
  get size(): { readonly found: number; readonly absent: number } {
    return { found: this.#found.size, absent: this.#absent.size };
  }
}
